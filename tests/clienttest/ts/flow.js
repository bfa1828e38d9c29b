// flow.js drives a Folio node with the official TypeScript client,
// @tigrisdata/core (the version TestOfficialTypeScriptClient installs), over
// the client's only protocol, gRPC: the flow of the Go client's test. It is
// run by that test as
//
//	node flow.js <host:port> <database> <result file>
//
// with NODE_PATH pointing at the installed client. It writes what it saw,
// as JSON, to the result file, for the Go test to check, and exits 1 with
// the error on stderr at the first call that fails: every call must succeed
// for the flow to finish.
"use strict";

const fs = require("fs");
const { Tigris } = require("@tigrisdata/core");
const {
	TigrisDataTypes,
	SelectorFilterOperator,
	LogicalOperator,
	UpdateFieldsOperator,
} = require("@tigrisdata/core/dist/types");
const { SortOrder } = require("@tigrisdata/core/dist/search/types");

const [url, dbName, resultFile] = process.argv.slice(2);
if (!resultFile) {
	console.error("usage: node flow.js <host:port> <database> <result file>");
	process.exit(2);
}

// The schema the client's way in this version: a TigrisSchema object (the
// decorators came later), with a key the server generates.
const userSchema = {
	id: { type: TigrisDataTypes.UUID, primary_key: { order: 1, autoGenerate: true } },
	name: { type: TigrisDataTypes.STRING },
	age: { type: TigrisDataTypes.INT64 },
};
const eventSchema = {
	kind: { type: TigrisDataTypes.STRING },
	n: { type: TigrisDataTypes.INT64 },
};

const names = (docs) => docs.map((d) => d.name).sort();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
	const out = {};
	// A loopback URL without credentials: the client opens an insecure
	// channel, as Folio serves gRPC in cleartext.
	const tigris = new Tigris({ serverUrl: url });

	out.serverVersion = (await tigris.getServerMetadata()).serverVersion;

	const db = await tigris.createDatabaseIfNotExists(dbName);
	const users = await db.createOrUpdateCollection("users", userSchema);
	out.databases = (await tigris.listDatabases()).map((d) => d.name).filter((n) => n === dbName);
	out.collections = (await db.listCollections()).map((c) => c.name).sort();

	// Insert: the client copies each generated key into the document.
	const people = await users.insertMany([
		{ name: "Ann", age: 30 },
		{ name: "Bob", age: 25 },
		{ name: "Cid", age: 41 },
	]);
	out.insertedIds = people.map((p) => p.id);
	const one = await users.insertOne({ name: "Dot", age: 19 });
	out.insertOneId = one.id;

	// Reads by key and by filter.
	out.byId = [];
	for (const p of people) {
		out.byId.push(await users.findOne({ id: p.id }));
	}
	const read = async (filter) => names(await users.findMany(filter).toArray());
	out.all = await read();
	out.ageGt26 = await read({ op: SelectorFilterOperator.GT, fields: { age: 26 } });
	out.ageBetween = await read({
		op: LogicalOperator.AND,
		selectorFilters: [
			{ op: SelectorFilterOperator.GTE, fields: { age: 26 } },
			{ op: SelectorFilterOperator.LTE, fields: { age: 30 } },
		],
	});
	out.bobOrCid = await read({ op: LogicalOperator.OR, selectorFilters: [{ name: "Bob" }, { name: "Cid" }] });
	out.limit2 = (await users.findMany(undefined, undefined, undefined, { limit: 2 }).toArray()).length;

	// Update and delete. updateOne and deleteOne send options.limit = 1, a
	// field of the later messages: with two matches, one must change.
	const upd = await users.updateMany({ name: "Bob" }, { op: UpdateFieldsOperator.SET, fields: { age: 26 } });
	out.updateModified = upd.modifiedCount;
	out.bobAfterUpdate = (await users.findOne({ id: people[1].id })).age;
	await users.updateOne({ op: SelectorFilterOperator.LT, fields: { age: 27 } }, { age: 99 });
	out.ages99AfterUpdateOne = (await users.findMany({ age: 99 }).toArray()).length;
	await users.deleteOne({ age: 99 });
	out.afterDeleteOne = await read();
	await users.deleteMany({ name: "Cid" });
	out.afterDelete = await read();

	// A transaction that commits, reading its own write.
	await db.transact(async (tx) => {
		await users.insertOne({ name: "Dan", age: 50 }, tx);
		const dan = await users.findOne({ name: "Dan" }, undefined, tx);
		if (!dan) throw new Error("the transaction does not see its own insert");
		await users.updateMany({ name: "Ann" }, { age: 31 }, tx);
	});
	out.afterCommit = await read();
	out.annAfterCommit = (await users.findOne({ name: "Ann" })).age;

	// A transaction that fails is rolled back by the client.
	const abandon = new Error("abandon");
	try {
		await db.transact(async (tx) => {
			await users.insertOne({ name: "Eve", age: 20 }, tx);
			await users.deleteMany({ name: "Ann" }, tx);
			throw abandon;
		});
		out.abandoned = "committed";
	} catch (e) {
		out.abandoned = e === abandon ? "rolled back" : String(e);
	}
	// And one rolled back explicitly.
	const session = await db.beginTransaction();
	await users.insertOne({ name: "Fay", age: 60 }, session);
	await session.rollback();
	out.afterRollback = await read();

	// Search: the documents are Ann, Dan and one of Bob and Dot by now.
	out.search = await search(users);

	// Errors come back with their codes and messages.
	try {
		await users.insertOne({ id: people[0].id, name: "Ann again", age: 1 });
		out.duplicate = "inserted";
	} catch (e) {
		out.duplicate = { code: e.code, details: e.details };
	}

	// This client has no collection events; its streams are topics'.
	out.subscribe = await topics(db);

	// Describe: each collection's schema, as base64 of its JSON.
	const desc = await db.describe();
	out.described = desc.collectionsDescription
		.map((c) => ({ name: c.collection, schema: JSON.parse(Buffer.from(c.schema, "base64").toString()) }))
		.sort((a, b) => (a.name < b.name ? -1 : 1));
	await db.dropCollection("events");
	out.collectionsAfterDrop = (await db.listCollections()).map((c) => c.name);

	await tigris.dropDatabase(dbName);
	out.databasesAfterDrop = (await tigris.listDatabases()).map((d) => d.name).filter((n) => n === dbName);

	fs.writeFileSync(resultFile, JSON.stringify(out, null, 2) + "\n");
	// The client keeps its channels open: end here rather than wait.
	process.exit(0);
}

// search searches the collection as the application sees it then: a term,
// a filter with a facet (through search(), which asks for page 1 of 20,
// case-insensitive), every page of a sorted search streamed one hit a
// page (through searchStream(), which asks for no page), and the other
// order.
async function search(users) {
	const hitNames = (res) => res.hits.map((h) => h.document.name);
	const dan = await users.search({ q: "dan" });
	const filtered = await users.search({
		q: "",
		filter: { op: SelectorFilterOperator.GT, fields: { age: 26 } },
		facets: ["name"],
	});
	const facet = filtered.facets.get("name");
	const pages = [];
	for await (const page of users.searchStream(
		{ q: "", filter: { op: SelectorFilterOperator.GT, fields: { age: 26 } }, sort: [{ field: "age", order: SortOrder.DESC }] },
		{ perPage: 1 },
	)) {
		pages.push({ names: hitNames(page), current: page.meta.page.current, totalPages: page.meta.totalPages });
	}
	// Ascending too: with the sort ignored, one of the two orders fails.
	const ascending = await users.search({ q: "", filter: { op: SelectorFilterOperator.GT, fields: { age: 26 } }, sort: [{ field: "age", order: SortOrder.ASC }] });
	return {
		term: hitNames(dan),
		ascending: hitNames(ascending),
		filtered: hitNames(filtered).sort(),
		found: filtered.meta.found,
		facet: facet ? Object.fromEntries(facet.counts.map((c) => [c.value, c.count])) : null,
		facetCount: facet && facet.stats ? facet.stats.count : null,
		sortedPages: pages,
	};
}

// topics publishes to a topic and reads the messages back by subscribing,
// unfiltered and with a filter. The client returns from subscribe before
// the server has the stream, so probes are published until one arrives:
// from then on, every message reaches the stream.
async function topics(db) {
	const topic = await db.createOrUpdateTopic("events", eventSchema);
	const subscribe = (filter) => {
		const got = [];
		let failed;
		const cb = { onNext: (m) => got.push(m), onEnd: () => {}, onError: (e) => (failed = e) };
		if (filter) topic.subscribeWithFilter(filter, cb);
		else topic.subscribe(cb);
		return { got, failed: () => failed };
	};
	const all = subscribe();
	const filtered = subscribe({ kind: "keep" });
	const waitFor = async (sub, pred, what, probe) => {
		for (let i = 0; i < 100; i++) {
			if (sub.failed()) throw sub.failed();
			if (sub.got.some(pred)) return;
			if (probe) await topic.publish(probe);
			await sleep(100);
		}
		throw new Error("no " + what + " within 10s");
	};
	await waitFor(all, (m) => m.kind === "probe", "probe on the unfiltered stream", { kind: "probe", n: 0 });
	await waitFor(filtered, (m) => m.kind === "keep" && m.n === 0, "probe on the filtered stream", { kind: "keep", n: 0 });
	await topic.publishMany([
		{ kind: "keep", n: 1 },
		{ kind: "drop", n: 2 },
		{ kind: "keep", n: 3 },
	]);
	await waitFor(all, (m) => m.n === 3, "message 3 on the unfiltered stream");
	await waitFor(filtered, (m) => m.n === 3, "message 3 on the filtered stream");
	const ns = (sub) => sub.got.filter((m) => m.kind !== "probe" && m.n > 0).map((m) => m.n);
	const stored = (await topic.findMany({ kind: "keep" }).toArray()).map((m) => m.n).filter((n) => n > 0).sort();
	return { all: ns(all), filtered: ns(filtered), stored: stored };
}

main().catch((e) => {
	console.error("flow failed:", e && e.stack ? e.stack : e, e && e.code !== undefined ? "(code " + e.code + ")" : "");
	process.exit(1);
});
