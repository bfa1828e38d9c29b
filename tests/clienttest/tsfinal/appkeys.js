// appkeys.js is an application with the final official TypeScript client,
// @tigrisdata/core 1.3.0, against a server with authentication: its
// deployment script (as the owner, over HTTP: the client has no app key
// calls) makes two projects and a key of each; the application, the
// client unchanged, connects with its project's key (the client gets its
// tokens from /v1/auth/token itself and speaks TLS once it has
// credentials), makes data calls and cache calls; the other project's
// key is refused on this project's collections and caches with the
// original's code (PERMISSION_DENIED) and reaches its own. TestFinalClientsAppKeys runs it as
//
//	node appkeys.js <result file>
//
// with FOLIO_URL the server's host:port, FOLIO_PROJECT the project to
// create, FOLIO_OWNER_ID and FOLIO_OWNER_SECRET the owner's credentials,
// and NODE_EXTRA_CA_CERTS the server's certificate, which Node (fetch and
// grpc-js alike) then trusts. The result file is flow.js's.
"use strict";

const assert = require("node:assert/strict");
const { rejects, runSteps, finish } = require("./steps.js");
const { Tigris, TigrisDataTypes } = require("@tigrisdata/core");

const [resultFile] = process.argv.slice(2);
const url = process.env.FOLIO_URL;
const project = process.env.FOLIO_PROJECT || "keys_ts";
const other = project + "_other";
const ownerID = process.env.FOLIO_OWNER_ID;
const ownerSecret = process.env.FOLIO_OWNER_SECRET;
if (!resultFile || !url || !ownerID || !ownerSecret) {
	console.error("usage: FOLIO_URL=<host:port> FOLIO_OWNER_ID=<id> FOLIO_OWNER_SECRET=<secret> NODE_EXTRA_CA_CERTS=<cert> [FOLIO_PROJECT=<name>] node appkeys.js <result file>");
	process.exit(2);
}

const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;

// token gets an access token for the credentials, form-encoded, as the
// deployment script's OAuth2 library would.
async function token(id, secret) {
	const resp = await fetch(`https://${url}/v1/auth/token`, {
		method: "POST",
		headers: { "content-type": "application/x-www-form-urlencoded" },
		body: new URLSearchParams({ grant_type: "client_credentials", client_id: id, client_secret: secret }),
	});
	const body = await resp.json();
	assert.equal(resp.status, 200, `token: ${JSON.stringify(body)}`);
	return body.access_token;
}

// call posts body to path with the token and returns the answer's JSON.
async function call(tok, path, body, method = "POST") {
	const resp = await fetch(`https://${url}${path}`, {
		method,
		headers: { "content-type": "application/json", authorization: `Bearer ${tok}` },
		body: JSON.stringify(body),
	});
	const answer = await resp.json();
	assert.equal(resp.status, 200, `${path}: ${JSON.stringify(answer)}`);
	return answer;
}

const customerSchema = {
	email: { type: TigrisDataTypes.STRING, primary_key: { order: 1 } },
	name: { type: TigrisDataTypes.STRING },
};

async function main() {
	const keys = {};
	const clients = [];
	// connect is the application's client with a key, unchanged: the
	// credentials switch it to TLS and to tokens of its own.
	const connect = (projectName, key) => {
		const c = new Tigris({ serverUrl: url, projectName, clientId: key.id, clientSecret: key.secret, branch: "main" });
		clients.push(c);
		return c;
	};
	let owner, app, stranger;

	const steps = [
		["projects and keys, as the owner over HTTP", async () => {
			owner = await token(ownerID, ownerSecret);
			for (const p of [project, other]) {
				assert.equal((await call(owner, `/v1/projects/${p}/create`, {})).status, "created");
				const created = (await call(owner, `/v1/projects/${p}/apps/keys/create`, { name: `${p} key` })).created_app_key;
				assert.ok(created.id && created.secret, `the created key: ${JSON.stringify(created)}`);
				assert.equal(created.project, p);
				keys[p] = created;
			}
		}],

		["data calls with the project's key", async () => {
			app = connect(project, keys[project]);
			const db = app.getDatabase();
			await db.createOrUpdateCollection("customers", customerSchema);
			const customers = db.getCollection("customers");
			await customers.insertOne({ email: "ann@example.com", name: "Ann" });
			const got = await customers.findOne({ filter: { email: "ann@example.com" } });
			assert.equal(got.name, "Ann");
		}],

		["cache calls with the project's key", async () => {
			const sessions = await app.createCacheIfNotExists("sessions");
			assert.equal((await sessions.set("user:1", { name: "Ann" })).message, "Key is set successfully");
			await sessions.set("user:2", "Bob", { ex: 60 });
			assert.deepEqual(JSON.parse(JSON.stringify((await sessions.get("user:1")).value)), { name: "Ann" });
			const found = [];
			for await (const page of sessions.keys("user:*")) {
				found.push(...page);
			}
			assert.deepEqual(found.sort(), ["user:1", "user:2"]);
			assert.equal((await sessions.del("user:2")).message, "Entries deleted count# 1");
			await rejects("get of a key deleted", sessions.get("user:2"), NOT_FOUND);
			await app.createCacheIfNotExists("scratch");
			assert.deepEqual((await app.listCaches()).caches.map((c) => c.name).sort(), ["scratch", "sessions"]);
			assert.equal((await app.deleteCache("scratch")).message, "Cache is deleted successfully");
		}],

		["another project's key is refused", async () => {
			stranger = connect(project, keys[other]);
			const db = stranger.getDatabase();
			await rejects("findOne with another project's key",
				db.getCollection("customers").findOne({ filter: { email: "ann@example.com" } }), PERMISSION_DENIED);
			await rejects("insertOne with another project's key",
				db.getCollection("customers").insertOne({ email: "eve@example.com", name: "Eve" }), PERMISSION_DENIED);
			await rejects("createCache with another project's key", stranger.createCacheIfNotExists("intruder"), PERMISSION_DENIED);
			await rejects("listCaches with another project's key", stranger.listCaches(), PERMISSION_DENIED);
			const sessions = stranger.getCache("sessions");
			await rejects("cache get with another project's key", sessions.get("user:1"), PERMISSION_DENIED);
			await rejects("cache set with another project's key", sessions.set("user:1", "Eve"), PERMISSION_DENIED);
			await rejects("cache del with another project's key", sessions.del("user:1"), PERMISSION_DENIED);
			await rejects("deleteCache with another project's key", stranger.deleteCache("sessions"), PERMISSION_DENIED);
			// Nothing of the project changed.
			assert.deepEqual(JSON.parse(JSON.stringify((await app.getCache("sessions").get("user:1")).value)), { name: "Ann" });
			const eve = await app.getDatabase().getCollection("customers").findOne({ filter: { email: "eve@example.com" } });
			assert.equal(eve, undefined);
		}],

		["the other key reaches its own project", async () => {
			const own = connect(other, keys[other]);
			const c = await own.createCacheIfNotExists("theirs");
			await c.set("k", 1);
			assert.equal((await c.get("k")).value, 1);
			assert.deepEqual((await own.listCaches()).caches.map((x) => x.name), ["theirs"]);
		}],
	];

	const result = await runSteps(steps);
	for (const c of clients) {
		c.close();
	}
	finish(resultFile, result);
}

main().catch((e) => {
	console.error(e);
	process.exit(2);
});
