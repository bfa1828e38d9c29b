// search.js is an application of the final API's search indexes written
// with the final official TypeScript clients, unchanged: @tigrisdata/core
// 1.3.0's Search (an index of its own, every document call, search with a
// filter, facets, a sort, pages and groups) and @tigrisdata/vector 1.1.0's
// VectorDocumentStore (the vector database client built on it: documents
// with embeddings, the nearest to a query vector with and without a
// filter), checking every answer. TestFinalSearchClients runs it as
//
//	node search.js <result file>
//
// with NODE_PATH, FOLIO_URL and FOLIO_PROJECT as for flow.js. Each step
// runs even when an earlier one failed; the result file lists the steps
// and the failures, and the exit status is 1 if any failed.
"use strict";

const assert = require("node:assert/strict");
const { rejects, runSteps, finish } = require("./steps.js");
const grpc = require("@grpc/grpc-js");
const { Tigris, TigrisDataTypes } = require("@tigrisdata/core");
const { VectorDocumentStore } = require("@tigrisdata/vector");
const { TigrisClient } = require("@tigrisdata/core/dist/proto/server/v1/api_grpc_pb");
const api = require("@tigrisdata/core/dist/proto/server/v1/api_pb");

const [resultFile] = process.argv.slice(2);
const url = process.env.FOLIO_URL;
const project = process.env.FOLIO_PROJECT || "finalsearch_ts";
if (!resultFile || !url) {
	console.error("usage: FOLIO_URL=<host:port> [FOLIO_PROJECT=<name>] node search.js <result file>");
	process.exit(2);
}

// An index of tools, as a schema object of the client's.
const toolSchema = {
	id: { type: TigrisDataTypes.STRING, id: true },
	name: { type: TigrisDataTypes.STRING, searchIndex: true, sort: true },
	brand: { type: TigrisDataTypes.STRING, searchIndex: true, facet: true },
	price: { type: TigrisDataTypes.NUMBER, searchIndex: true, sort: true, facet: true },
	tags: { type: TigrisDataTypes.ARRAY, items: { type: TigrisDataTypes.STRING }, searchIndex: true },
};

const tools = [
	{ id: "anvil", name: "Heavy anvil", brand: "Acme", price: 50, tags: ["heavy", "iron"] },
	{ id: "skates", name: "Rocket skates", brand: "Acme", price: 120, tags: ["fast"] },
	{ id: "seed", name: "Bird seed", brand: "Birdco", price: 5, tags: [] },
	{ id: "catapult", name: "Heavy catapult", brand: "Acme", price: 300, tags: ["heavy"] },
	{ id: "magnet", name: "Giant magnet", brand: "Magnaco", price: 80, tags: ["iron"] },
];

const plain = (x) => JSON.parse(JSON.stringify(x));
const sorted = (a) => [...a].sort();
const ids = (hits) => hits.map((h) => h.document.id);
const NOT_FOUND = 5;

function stub(client, method, req) {
	return new Promise((resolve, reject) => client[method](req, (err, resp) => (err ? reject(err) : resolve(resp))));
}

// noErrors checks a list of per-document statuses and gives their ids.
function noErrors(what, statuses, n) {
	assert.equal(statuses.length, n, `${what}: ${statuses.length} statuses, want ${n}`);
	for (const s of statuses) {
		assert.equal(s.error, undefined, `${what}: document ${s.id}: ${s.error && s.error.message}`);
	}
	return statuses.map((s) => s.id);
}

async function main() {
	const config = { serverUrl: url, projectName: project, branch: "main" };
	const client = new Tigris(config);
	const rawClient = new TigrisClient(url, grpc.credentials.createInsecure());
	const search = client.getSearch();
	let index;
	const page = (query, n) => index.search(query, n);

	const steps = [
		["create project", async () => {
			const resp = await stub(rawClient, "createProject", new api.CreateProjectRequest().setProject(project));
			assert.equal(resp.getStatus(), "created");
		}],

		["create index", async () => {
			index = await search.createOrUpdateIndex("tools", toolSchema);
			// Again: the same schema changes nothing.
			index = await search.createOrUpdateIndex("tools", toolSchema);
			const list = await search.listIndexes();
			assert.ok(list.map((i) => i.name).includes("tools"), `listIndexes: ${JSON.stringify(list.map((i) => i.name))}`);
			// getIndex asks the server nothing; a call on the index does.
			const unknown = await search.getIndex("no_such_index");
			await rejects("a document of an unknown index", unknown.getOne("x"), NOT_FOUND);
		}],

		["create documents", async () => {
			const created = noErrors("createMany", await index.createMany(tools), tools.length);
			assert.deepEqual(created, tools.map((t) => t.id));
			// An id the index holds already: that document's error, the other written.
			const again = await index.createMany([tools[0], { name: "Spring", brand: "Boing", price: 7, tags: [] }]);
			assert.equal(again.length, 2);
			assert.ok(again[0].error, "creating an existing id gave no error");
			assert.equal(again[1].error, undefined, again[1].error && again[1].error.message);
			// No id given: the server makes one.
			assert.ok(again[1].id, "no generated id");
			const spring = await index.getOne(again[1].id);
			assert.equal(spring.document.name, "Spring");
			noErrors("deleteOne", [await index.deleteOne(again[1].id)], 1);
		}],

		["get documents", async () => {
			const docs = await index.getMany(["skates", "anvil"]);
			assert.deepEqual(plain(docs.map((d) => d.document)), plain([tools[1], tools[0]]));
		}],

		["search words", async () => {
			const res = await page({ q: "heavy", searchFields: ["name"] }, 1);
			assert.deepEqual(sorted(ids(res.hits)), ["anvil", "catapult"]);
			assert.equal(res.meta.found, 2);
		}],

		["search filter and sort", async () => {
			const res = await page({ q: "", filter: { brand: "Acme" }, sort: { field: "price", order: "$desc" } }, 1);
			assert.deepEqual(ids(res.hits), ["catapult", "skates", "anvil"]);
			const cheap = await page({ filter: { price: { $lt: 60 } }, sort: { field: "price", order: "$asc" } }, 1);
			assert.deepEqual(ids(cheap.hits), ["seed", "anvil"]);
		}],

		["search facets", async () => {
			const res = await page({ q: "", facets: { brand: { size: 10 }, price: { size: 10 } } }, 1);
			const brands = Object.fromEntries(res.facets.brand.counts.map((c) => [c.value, c.count]));
			assert.deepEqual(brands, { Acme: 3, Birdco: 1, Magnaco: 1 });
			const stats = res.facets.price.stats;
			assert.equal(stats.count, 5);
			assert.equal(stats.min, 5);
			assert.equal(stats.max, 300);
			assert.equal(stats.sum, 555);
		}],

		["search pages", async () => {
			const sort = { field: "price", order: "$asc" };
			const first = await page({ q: "", sort, hitsPerPage: 2 }, 1);
			const second = await page({ q: "", sort, hitsPerPage: 2 }, 2);
			assert.deepEqual(ids(first.hits), ["seed", "anvil"]);
			assert.deepEqual(ids(second.hits), ["magnet", "skates"]);
			assert.equal(first.meta.found, 5);
			assert.equal(first.meta.totalPages, 3);
			// The iterator walks every page.
			const all = [];
			for await (const result of index.search({ q: "", sort, hitsPerPage: 2 })) {
				all.push(...ids(result.hits));
			}
			assert.deepEqual(all, ["seed", "anvil", "magnet", "skates", "catapult"]);
		}],

		["search fields", async () => {
			const res = await page({ q: "skates", includeFields: ["name", "price"] }, 1);
			assert.equal(res.hits.length, 1);
			assert.deepEqual(sorted(Object.keys(plain(res.hits[0].document))), ["name", "price"]);
		}],

		["search groups", async () => {
			const res = await page({ q: "", groupBy: ["brand"], sort: { field: "price", order: "$asc" } }, 1);
			const groups = Object.fromEntries(res.groupedHits.map((g) => [g.groupKeys.join(","), ids(g.hits)]));
			assert.deepEqual(sorted(Object.keys(groups)), ["Acme", "Birdco", "Magnaco"]);
			assert.deepEqual(groups.Acme, ["anvil", "skates", "catapult"]);
		}],

		["update documents", async () => {
			// An update replaces the fields it names and keeps the others.
			noErrors("updateOne", [await index.updateOne({ id: "anvil", price: 55 })], 1);
			const anvil = await index.getOne("anvil");
			assert.deepEqual(plain(anvil.document), { ...tools[0], price: 55 });
			// An update of an id the index lacks is that document's error.
			const missing = await index.updateMany([{ id: "nothing", price: 1 }, { id: "seed", price: 6 }]);
			assert.ok(missing[0].error, "updating an unknown id gave no error");
			assert.equal(missing[1].error, undefined);
			const res = await page({ filter: { price: 55 } }, 1);
			assert.deepEqual(ids(res.hits), ["anvil"]);
		}],

		["replace documents", async () => {
			const replaced = { id: "skates", name: "Rocket roller skates", brand: "Acme", price: 150, tags: [] };
			noErrors("createOrReplaceMany", await index.createOrReplaceMany([replaced, { id: "glue", name: "Glue", brand: "Stickco", price: 3, tags: [] }]), 2);
			assert.deepEqual(plain((await index.getOne("skates")).document), replaced);
			const res = await page({ q: "roller" }, 1);
			assert.deepEqual(ids(res.hits), ["skates"]);
		}],

		["delete documents", async () => {
			noErrors("deleteMany", await index.deleteMany(["glue", "magnet"]), 2);
			const removed = await index.deleteByQuery({ brand: "Birdco" });
			assert.equal(removed, 1);
			const res = await page({ q: "" }, 1);
			assert.deepEqual(sorted(ids(res.hits)), ["anvil", "catapult", "skates"]);
		}],

		["vector store", async () => {
			const store = new VectorDocumentStore({ connection: config, indexName: "notes", numDimensions: 3 });
			const docs = [
				{ content: "red", metadata: { colour: "warm", n: 1 } },
				{ content: "orange", metadata: { colour: "warm", n: 2 } },
				{ content: "blue", metadata: { colour: "cold", n: 3 } },
				{ content: "green", metadata: { colour: "cold", n: 4 } },
			];
			const statuses = await store.addDocumentsWithVectors({
				ids: ["r", "o", "b", "g"],
				embeddings: [[1, 0, 0], [0.9, 0.3, 0], [0, 0, 1], [0, 1, 0.2]],
				documents: docs,
			});
			noErrors("addDocumentsWithVectors", statuses, 4);

			const near = await store.similaritySearchVectorWithScore({ query: [1, 0.1, 0], k: 2 });
			assert.deepEqual(near.map(([d]) => d.content), ["red", "orange"]);
			assert.ok(near[0][1] <= near[1][1], `distances not ascending: ${near.map(([, s]) => s)}`);
			assert.ok(near[0][1] >= 0 && near[0][1] < 0.01, `cosine distance of the nearest: ${near[0][1]}`);

			// The filter applies before the nearest are chosen: two cold ones
			// come back, however far they are.
			const cold = await store.similaritySearchVector({ query: [1, 0.1, 0], k: 2, filter: { $or: [{ content: "blue" }, { content: "green" }] } });
			assert.deepEqual(sorted(cold.map((d) => d.content)), ["blue", "green"]);

			const got = await store.getDocuments(["b"]);
			assert.deepEqual(plain(got), [docs[2]]);
			noErrors("deleteDocuments", await store.deleteDocuments(["r"]), 1);
			const after = await store.similaritySearchVector({ query: [1, 0.1, 0], k: 1 });
			assert.deepEqual(after.map((d) => d.content), ["orange"]);
			await store.deleteIndex();
		}],

		["delete index", async () => {
			await search.deleteIndex("tools");
			await rejects("a search of a deleted index", index.search({ q: "" }, 1), NOT_FOUND);
			const list = await search.listIndexes();
			assert.ok(!list.map((i) => i.name).includes("tools"), "listIndexes still has the index");
		}],

		["delete project", async () => {
			await stub(rawClient, "deleteProject", new api.DeleteProjectRequest().setProject(project));
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
