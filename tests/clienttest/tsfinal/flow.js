// flow.js is an application written with the final official TypeScript
// client, @tigrisdata/core 1.3.0 (June 2023), in plain JavaScript: the
// flow of ../final/flow_test.go (a project, collections with generated
// keys and defaults, every document call, count, the 2023 operators, a
// transaction, search with facets, a branch), checking every answer.
// TestFinalClients runs it as
//
//	node flow.js <result file>
//
// with NODE_PATH pointing at the installed client, FOLIO_URL the server's
// host:port (a loopback address: the client speaks plaintext to loopback
// only, without credentials) and FOLIO_PROJECT the project to create. Each
// step runs even when an earlier one failed, so that one run names every
// call that fails; the result file lists the steps and the failures, and
// the exit status is 1 if any failed.
"use strict";

const assert = require("node:assert/strict");
const { rejects, runSteps, finish } = require("./steps.js");
const grpc = require("@grpc/grpc-js");
const { Tigris, TigrisDataTypes, GeneratedField } = require("@tigrisdata/core");
// The client has no call that creates a project; its generated stubs
// have, and an application (or its setup script) uses them.
const { TigrisClient } = require("@tigrisdata/core/dist/proto/server/v1/api_grpc_pb");
const api = require("@tigrisdata/core/dist/proto/server/v1/api_pb");

const [resultFile] = process.argv.slice(2);
const url = process.env.FOLIO_URL;
const project = process.env.FOLIO_PROJECT || "finalshop_ts";
if (!resultFile || !url) {
	console.error("usage: FOLIO_URL=<host:port> [FOLIO_PROJECT=<name>] node flow.js <result file>");
	process.exit(2);
}

// The schemas as the client's schema objects (the decorators would need a
// compiler).
const productSchema = {
	id: { type: TigrisDataTypes.UUID, primary_key: { order: 1, autoGenerate: true } },
	name: { type: TigrisDataTypes.STRING, searchIndex: true, sort: true },
	brand: { type: TigrisDataTypes.STRING, index: true, searchIndex: true, facet: true },
	price: { type: TigrisDataTypes.NUMBER, index: true, searchIndex: true, sort: true, facet: true },
	stock: { type: TigrisDataTypes.INT64, default: 10 },
	status: { type: TigrisDataTypes.STRING, default: "active" },
	tags: { type: TigrisDataTypes.ARRAY, items: { type: TigrisDataTypes.STRING } },
	createdAt: { type: TigrisDataTypes.DATE_TIME, timestamp: "createdAt" },
	updatedAt: { type: TigrisDataTypes.DATE_TIME, timestamp: "updatedAt" },
};
const orderSchema = {
	id: { type: TigrisDataTypes.INT64, primary_key: { order: 1, autoGenerate: true } },
	ref: { type: TigrisDataTypes.STRING, default: GeneratedField.CUID },
	productId: { type: TigrisDataTypes.UUID, index: true },
	qty: { type: TigrisDataTypes.INT64 },
	placedAt: { type: TigrisDataTypes.DATE_TIME, default: GeneratedField.NOW },
};
const customerSchema = {
	email: { type: TigrisDataTypes.STRING, primary_key: { order: 1 } },
	name: { type: TigrisDataTypes.STRING },
	tier: { type: TigrisDataTypes.STRING, default: "basic" },
};

const catalog = [
	{ name: "Anvil", brand: "Acme", price: 50, tags: ["heavy", "iron"] },
	{ name: "Rocket skates", brand: "Acme", price: 120, stock: 3 },
	{ name: "Bird seed", brand: "Birdco", price: 5, status: "seasonal" },
	{ name: "Catapult", brand: "Acme", price: 300, tags: ["heavy"] },
];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const names = (docs) => docs.map((d) => d.name);
// The client decodes documents into objects without a prototype (its
// JSON parser's); compared as plain data.
const plain = (x) => JSON.parse(JSON.stringify(x));
const sorted = (a) => [...a].sort();
// The gRPC status codes the flow expects.
const ALREADY_EXISTS = 6;
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

// rejects checks that p fails with the gRPC code.
// stub calls a method of the generated gRPC stub.
function stub(client, method, req) {
	return new Promise((resolve, reject) => client[method](req, (err, resp) => (err ? reject(err) : resolve(resp))));
}

async function main() {
	const state = {};
	const client = new Tigris({ serverUrl: url, projectName: project, branch: "main" });
	const rawClient = new TigrisClient(url, grpc.credentials.createInsecure());
	const db = client.getDatabase();
	const products = db.getCollection("products");
	const orders = db.getCollection("orders");
	const customers = db.getCollection("customers");
	const find = (q) => products.findMany(q).toArray();

	const steps = [
		["server info", async () => {
			const info = await client.getServerMetadata();
			assert.ok(info.serverVersion, "no server version");
		}],

		["create project", async () => {
			const resp = await stub(rawClient, "createProject", new api.CreateProjectRequest().setProject(project));
			assert.equal(resp.getStatus(), "created");
			await rejects("createProject of an existing project",
				stub(rawClient, "createProject", new api.CreateProjectRequest().setProject(project)), ALREADY_EXISTS);
			const list = await stub(rawClient, "listProjects", new api.ListProjectsRequest());
			assert.ok(list.getProjectsList().map((p) => p.getProject()).includes(project), "listProjects lacks the project");
		}],

		["create collections", async () => {
			await db.createOrUpdateCollection("products", productSchema);
			await db.createOrUpdateCollection("orders", orderSchema);
			await db.createOrUpdateCollection("customers", customerSchema);
			// Again: the same schemas change nothing.
			await db.createOrUpdateCollection("products", productSchema);
			const list = await db.listCollections();
			assert.deepEqual(sorted(list.map((c) => c.name)), ["customers", "orders", "products"]);
		}],

		["describe", async () => {
			const d = await products.describe();
			assert.equal(d.collection, "products");
			const schema = JSON.parse(d.schema);
			assert.deepEqual(schema.primary_key, ["id"]);
			const p = schema.properties;
			assert.equal(p.id.format, "uuid");
			assert.equal(p.id.autoGenerate, true);
			assert.equal(p.stock.default, 10);
			assert.equal(p.brand.facet, true);
			assert.equal(p.createdAt.createdAt, true);
			assert.equal(p.updatedAt.updatedAt, true);
			const desc = await db.describe();
			assert.deepEqual(sorted(desc.collectionsDescription.map((c) => c.collection)), ["customers", "orders", "products"]);
		}],

		["insert", async () => {
			const start = Date.now() - 60000;
			// insertMany copies each generated key into the documents it
			// returns (it throws if the answer has no metadata).
			const docs = await products.insertMany(catalog.map((d) => ({ ...d })));
			assert.equal(docs.length, catalog.length);
			state.ids = {};
			for (const d of docs) {
				assert.match(d.id, UUID_RE, `${d.name}'s generated key`);
				state.ids[d.name] = d.id;
			}
			assert.equal(new Set(Object.values(state.ids)).size, catalog.length, "keys not distinct");
			const all = await find({});
			assert.deepEqual(sorted(names(all)), sorted(names(catalog)));
			for (const p of all) {
				assert.equal(p.id, state.ids[p.name]);
				assert.equal(Number(p.stock), p.name === "Rocket skates" ? 3 : 10, `${p.name}'s stock`);
				assert.equal(p.status, p.name === "Bird seed" ? "seasonal" : "active", `${p.name}'s status`);
				const created = new Date(p.createdAt).getTime();
				assert.ok(created >= start && created <= Date.now() + 60000, `${p.name}'s createdAt ${p.createdAt}`);
			}
			const one = await products.insertOne({ name: "Tornado kit", brand: "Acme", price: 80 });
			assert.match(one.id, UUID_RE);
			await products.deleteOne({ filter: { id: one.id } });
		}],

		["insert duplicate key", async () => {
			await customers.insertOne({ email: "wile@example.com", name: "Wile" });
			await rejects("insert of an existing key", customers.insertOne({ email: "wile@example.com", name: "Wile E." }), ALREADY_EXISTS);
			const c = await customers.findOne({ filter: { email: "wile@example.com" } });
			assert.deepEqual(plain(c), { email: "wile@example.com", name: "Wile", tier: "basic" });
		}],

		["insert or replace", async () => {
			await customers.insertOrReplaceMany([
				{ email: "wile@example.com", name: "Wile E. Coyote", tier: "gold" },
				{ email: "road@example.com", name: "Road Runner" },
			]);
			const all = await customers.findMany({ sort: { field: "email", order: "$asc" } }).toArray();
			assert.deepEqual(plain(all), [
				{ email: "road@example.com", name: "Road Runner", tier: "basic" },
				{ email: "wile@example.com", name: "Wile E. Coyote", tier: "gold" },
			]);
		}],

		["read", async () => {
			assert.deepEqual(sorted(names(await find({ filter: { price: { $gt: 60 } } }))), ["Catapult", "Rocket skates"]);
			assert.deepEqual(sorted(names(await find({ filter: { $and: [{ brand: "Acme" }, { price: { $lt: 200 } }] } }))), ["Anvil", "Rocket skates"]);
			assert.deepEqual(sorted(names(await find({ filter: { $or: [{ brand: "Birdco" }, { price: { $gte: 300 } }] } }))), ["Bird seed", "Catapult"]);
			assert.deepEqual(names(await find({ sort: { field: "price", order: "$desc" } })), ["Catapult", "Rocket skates", "Anvil", "Bird seed"]);
			assert.deepEqual(names(await find({ sort: { field: "price", order: "$asc" }, options: { skip: 1, limit: 2 } })), ["Anvil", "Rocket skates"]);
			const anvil = await products.findOne({ filter: { name: "Anvil" } });
			assert.equal(anvil.id, state.ids.Anvil);
			assert.deepEqual(plain(anvil.tags), ["heavy", "iron"]);
			assert.equal(await products.findOne({ filter: { name: "Dynamite" } }), undefined);
			const projected = await find({ filter: { name: "Anvil" }, readFields: { include: ["name", "price"] } });
			assert.deepEqual(plain(projected), [{ name: "Anvil", price: 50 }]);
		}],

		["update", async () => {
			const resp = await products.updateMany({ filter: { name: "Anvil" }, fields: { $set: { price: 55.5, status: "sale" } } });
			assert.equal(resp.modifiedCount, 1);
			const anvil = await products.findOne({ filter: { name: "Anvil" } });
			assert.equal(anvil.price, 55.5);
			assert.equal(anvil.status, "sale");
			assert.ok(anvil.updatedAt && new Date(anvil.updatedAt) >= new Date(anvil.createdAt), `updatedAt ${anvil.updatedAt}`);
			// updateOne sends limit 1: one of Acme's three changes.
			const one = await products.updateOne({ filter: { brand: "Acme" }, fields: { status: "featured" } });
			assert.equal(one.modifiedCount, 1);
			assert.equal(await products.count({ status: "featured" }), 1);
			await products.updateMany({ filter: { status: "featured" }, fields: { $set: { status: "clearance" } } });
		}],

		["count", async () => {
			assert.equal(await products.count(), 4);
			assert.equal(await products.count({ brand: "Acme" }), 3);
			assert.equal(await products.count({ price: { $gte: 100 } }), 2);
			assert.equal(await products.count({ brand: "Nobody" }), 0);
		}],

		["2023 filter operators", async () => {
			for (const [filter, want] of [
				[{ name: { $regex: "^[AB]" } }, ["Anvil", "Bird seed"]],
				[{ name: { $contains: "ket" } }, ["Rocket skates"]],
				[{ tags: { $contains: "iron" } }, ["Anvil"]],
				[{ brand: { $not: "Acme" } }, ["Bird seed"]],
				[{ brand: "Acme", name: { $regex: "t$" } }, ["Catapult"]],
			]) {
				assert.deepEqual(sorted(names(await find({ filter }))), want, JSON.stringify(filter));
				assert.equal(await products.count(filter), want.length, `count ${JSON.stringify(filter)}`);
			}
			await rejects("an invalid $regex", find({ filter: { name: { $regex: "(" } } }), INVALID_ARGUMENT);
		}],

		["2023 update operators", async () => {
			const anvil = { name: "Anvil" };
			for (const [fields, stock, price, tags] of [
				[{ $increment: { stock: 5 } }, 15, 55.5, ["heavy", "iron"]],
				[{ $decrement: { stock: 3 } }, 12, 55.5, ["heavy", "iron"]],
				[{ $multiply: { stock: 2, price: 2 } }, 24, 111, ["heavy", "iron"]],
				[{ $divide: { stock: 5, price: 4 } }, 4, 27.75, ["heavy", "iron"]],
				[{ $push: { tags: "sale" } }, 4, 27.75, ["heavy", "iron", "sale"]],
				[{ $set: { status: "active" }, $increment: { stock: 1 } }, 5, 27.75, ["heavy", "iron", "sale"]],
			]) {
				const resp = await products.updateMany({ filter: anvil, fields });
				assert.equal(resp.modifiedCount, 1, JSON.stringify(fields));
				const got = await products.findOne({ filter: anvil });
				assert.deepEqual(plain([Number(got.stock), got.price, got.tags]), [stock, price, tags], JSON.stringify(fields));
			}
			await rejects("$divide by 0", products.updateMany({ filter: { brand: "Acme" }, fields: { $divide: { stock: 0 } } }), INVALID_ARGUMENT);
			assert.equal(Number((await products.findOne({ filter: anvil })).stock), 5, "stock after a refused $divide");
			// $unset as the client sends it: a list of field names.
			await products.updateMany({ filter: { name: "Catapult" }, fields: { $unset: ["tags"] } });
			assert.equal((await products.findOne({ filter: { name: "Catapult" } })).tags, undefined);
		}],

		["transaction", async () => {
			const start = Date.now() - 60000;
			await db.transact(async (tx) => {
				const anvil = await products.findOne({ filter: { id: state.ids.Anvil } }, tx);
				await orders.insertOne({ productId: anvil.id, qty: 2 }, tx);
				await products.updateOne({ filter: { id: anvil.id }, fields: { $decrement: { stock: 2 } } }, tx);
			});
			const order = await orders.findOne({ filter: { productId: state.ids.Anvil } });
			assert.ok(order, "the committed order");
			assert.ok(Number(order.id) > 0, `order key ${order.id}`);
			assert.equal(Number(order.qty), 2);
			assert.match(order.ref, /^c[0-9a-z]{19,}$/, "order's ref, a cuid()");
			const placed = new Date(order.placedAt).getTime();
			assert.ok(placed >= start && placed <= Date.now() + 60000, `placedAt ${order.placedAt}`);
			assert.equal(Number((await products.findOne({ filter: { name: "Anvil" } })).stock), 3);

			// A transaction whose code throws is rolled back.
			await assert.rejects(db.transact(async (tx) => {
				await orders.insertOne({ productId: state.ids.Anvil, qty: 1 }, tx);
				await products.updateMany({ filter: { brand: "Acme" }, fields: { $set: { stock: 0 } } }, tx);
				throw new Error("payment declined");
			}), /payment declined/);
			assert.equal(await orders.count(), 1);
			assert.equal(await products.count({ stock: 0 }), 0);
		}],

		["explain", async () => {
			const e = await products.explain({ filter: { brand: "Acme" } });
			assert.ok(e.filter, "explain's filter");
			assert.ok(e.readType, "explain's read type");
		}],

		["search with facets", async () => {
			const res = await products.search({
				q: "",
				filter: { price: { $gt: 10 } },
				facets: ["brand"],
				sort: { field: "price", order: "$asc" },
			}, 1);
			assert.deepEqual(res.hits.map((h) => h.document.name), ["Anvil", "Rocket skates", "Catapult"]);
			assert.equal(res.meta.found, 3);
			assert.deepEqual(res.facets.brand.counts.map((c) => [c.value, c.count]), [["Acme", 3]]);
			const text = await products.search({ q: "skates", searchFields: ["name"] }, 1);
			assert.deepEqual(text.hits.map((h) => h.document.name), ["Rocket skates"]);
			// The iterator form: one result per page.
			let pages = 0;
			for await (const page of products.search({ q: "", hitsPerPage: 2 })) {
				pages++;
				assert.ok(page.hits.length <= 2);
			}
			assert.equal(pages, 2);
		}],

		["branch", async () => {
			const branch = "feature_ts";
			await db.createBranch(branch);
			await rejects("createBranch of an existing branch", db.createBranch(branch), ALREADY_EXISTS);
			const onBranch = new Tigris({ serverUrl: url, projectName: project, branch });
			const bdb = onBranch.getDatabase();
			const bproducts = bdb.getCollection("products");
			assert.equal(await bproducts.count(), 0, "a new branch has no documents");
			const jet = await bproducts.insertOne({ name: "Jet pack", brand: "Acme", price: 900 });
			assert.match(jet.id, UUID_RE);
			const got = await bproducts.findOne({ filter: { name: "Jet pack" } });
			assert.equal(Number(got.stock), 10, "the schema's default on the branch");
			assert.equal(await products.count({ name: "Jet pack" }), 0, "main sees the branch's document");
			await bdb.transact(async (tx) => {
				await bproducts.updateOne({ filter: { name: "Jet pack" }, fields: { $set: { price: 950 } } }, tx);
			});
			assert.equal((await bproducts.findOne({ filter: { name: "Jet pack" } })).price, 950);
			assert.deepEqual(sorted((await db.describe()).branches), [branch, "main"]);
			await assert.rejects(db.deleteBranch("main"), "deleting main is refused");
			await db.deleteBranch(branch);
			await rejects("count on a deleted branch", bproducts.count(), NOT_FOUND);
			onBranch.close();
		}],

		["delete", async () => {
			await products.deleteOne({ filter: { brand: "Acme" } });
			assert.equal(await products.count({ brand: "Acme" }), 2, "deleteOne sends limit 1");
			await products.deleteMany({ filter: { brand: "Birdco" } });
			assert.equal(await products.count(), 2);
			await products.deleteMany({ filter: {} });
			assert.equal(await products.count(), 0);
		}],

		["drop collection", async () => {
			await db.dropCollection("customers");
			assert.deepEqual(sorted((await db.listCollections()).map((c) => c.name)), ["orders", "products"]);
		}],

		["delete project", async () => {
			const resp = await stub(rawClient, "deleteProject", new api.DeleteProjectRequest().setProject(project));
			// The original answered "dropped", as for a database (beta.122).
			assert.equal(resp.getStatus(), "dropped");
			const list = await stub(rawClient, "listProjects", new api.ListProjectsRequest());
			assert.ok(!list.getProjectsList().map((p) => p.getProject()).includes(project), "listProjects still has the project");
		}],
	];

	const result = await runSteps(steps);
	client.close();
	rawClient.close();
	finish(resultFile, result);
}

main().catch((e) => {
	console.error(e);
	process.exit(2);
});
