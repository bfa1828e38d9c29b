// cache.js is an application's use of caches with the final official
// TypeScript client, @tigrisdata/core 1.3.0: a cache created, keys set
// (with and without conditions and expiry), read, replaced, listed by
// pattern and deleted, the cache listed and deleted. TestFinalClients runs
// it as flow.js is run (see there):
//
//	node cache.js <result file>
"use strict";

const assert = require("node:assert/strict");
const { rejects, runSteps, finish } = require("./steps.js");
const grpc = require("@grpc/grpc-js");
const { Tigris } = require("@tigrisdata/core");
const { TigrisClient } = require("@tigrisdata/core/dist/proto/server/v1/api_grpc_pb");
const api = require("@tigrisdata/core/dist/proto/server/v1/api_pb");

const [resultFile] = process.argv.slice(2);
const url = process.env.FOLIO_URL;
const project = process.env.FOLIO_PROJECT || "cache_ts";
if (!resultFile || !url) {
	console.error("usage: FOLIO_URL=<host:port> [FOLIO_PROJECT=<name>] node cache.js <result file>");
	process.exit(2);
}

const ALREADY_EXISTS = 6;
const NOT_FOUND = 5;

function stub(client, method, req) {
	return new Promise((resolve, reject) => client[method](req, (err, resp) => (err ? reject(err) : resolve(resp))));
}

async function main() {
	const client = new Tigris({ serverUrl: url, projectName: project, branch: "main" });
	const rawClient = new TigrisClient(url, grpc.credentials.createInsecure());
	let sessions;

	const steps = [
		["create project", async () => {
			const resp = await stub(rawClient, "createProject", new api.CreateProjectRequest().setProject(project));
			assert.equal(resp.getStatus(), "created");
		}],

		["create cache", async () => {
			sessions = await client.createCacheIfNotExists("sessions");
			assert.equal(sessions.getCacheName(), "sessions");
			// Again: the client takes ALREADY_EXISTS as the cache there.
			await client.createCacheIfNotExists("sessions");
		}],

		["set and get", async () => {
			const set = await sessions.set("user:1", { name: "Ada", visits: 1 });
			assert.equal(set.message, "Key is set successfully");
			const got = await sessions.get("user:1");
			assert.deepEqual(JSON.parse(JSON.stringify(got.value)), { name: "Ada", visits: 1 });
			await sessions.set("count", 42);
			assert.equal((await sessions.get("count")).value, 42);
		}],

		["set with conditions and expiry", async () => {
			await sessions.set("user:2", "Grace", { ex: 60, nx: true });
			await rejects("set nx of a key present", sessions.set("user:2", "other", { nx: true }), ALREADY_EXISTS);
			await rejects("set xx of a key absent", sessions.set("user:3", "x", { xx: true }), NOT_FOUND);
			await sessions.set("user:2", "Grace Hopper", { xx: true });
			assert.equal((await sessions.get("user:2")).value, "Grace Hopper");
			await sessions.set("brief", "gone soon", { px: 1 });
			await new Promise((r) => setTimeout(r, 20));
			await rejects("get of an expired key", sessions.get("brief"), NOT_FOUND);
		}],

		["getSet", async () => {
			const gs = await sessions.getSet("count", 43);
			assert.equal(gs.old_value, 42);
			const fresh = await sessions.getSet("fresh", "new");
			assert.equal(fresh.old_value, undefined);
		}],

		["keys", async () => {
			const all = [];
			for await (const page of sessions.keys()) {
				all.push(...page);
			}
			assert.deepEqual([...all].sort(), ["count", "fresh", "user:1", "user:2"]);
			const users = [];
			for await (const page of sessions.keys("user:*")) {
				users.push(...page);
			}
			assert.deepEqual([...users].sort(), ["user:1", "user:2"]);
		}],

		["del", async () => {
			const del = await sessions.del("user:1");
			assert.equal(del.message, "Entries deleted count# 1");
			await rejects("get of a key deleted", sessions.get("user:1"), NOT_FOUND);
			assert.equal((await sessions.del("user:1")).message, "Entries deleted count# 0");
		}],

		["list caches", async () => {
			await client.createCacheIfNotExists("other");
			const list = await client.listCaches();
			assert.deepEqual(list.caches.map((c) => c.name).sort(), ["other", "sessions"]);
		}],

		["delete cache", async () => {
			const resp = await client.deleteCache("other");
			assert.equal(resp.message, "Cache is deleted successfully");
			await rejects("delete a cache deleted", client.deleteCache("other"), NOT_FOUND);
			await rejects("get in a cache deleted", client.getCache("other").get("x"), NOT_FOUND);
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
