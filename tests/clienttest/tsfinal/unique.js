// unique.js is an application's use of a unique field (Folio's own) with
// the final official TypeScript client, @tigrisdata/core 1.3.0, unchanged:
// the schema, whose "unique" the client's decorators cannot say, is sent
// with the generated gRPC stub, as an application with a hand-written
// schema does; the documents go through the client's collection. A
// duplicate insert, replace and update are refused with ALREADY_EXISTS
// naming the field, a document written again with its own value is
// taken, and adding the key over duplicates is refused. TestFinalClients
// runs it as flow.js is run (see there):
//
//	node unique.js <result file>
"use strict";

const assert = require("node:assert/strict");
const { rejects, runSteps, finish } = require("./steps.js");
const grpc = require("@grpc/grpc-js");
const { Tigris } = require("@tigrisdata/core");
const { TigrisClient } = require("@tigrisdata/core/dist/proto/server/v1/api_grpc_pb");
const api = require("@tigrisdata/core/dist/proto/server/v1/api_pb");

const [resultFile] = process.argv.slice(2);
const url = process.env.FOLIO_URL;
const project = process.env.FOLIO_PROJECT || "unique_ts";
if (!resultFile || !url) {
	console.error("usage: FOLIO_URL=<host:port> [FOLIO_PROJECT=<name>] node unique.js <result file>");
	process.exit(2);
}

const INVALID_ARGUMENT = 3;
const ALREADY_EXISTS = 6;

const unique = {
	title: "members",
	properties: { id: { type: "integer" }, email: { type: "string", unique: true }, name: { type: "string" } },
	primary_key: ["id"],
};
const plain = { ...unique, properties: { ...unique.properties, email: { type: "string" } } };

function stub(client, method, req) {
	return new Promise((resolve, reject) => client[method](req, (err, resp) => (err ? reject(err) : resolve(resp))));
}

// rejectsNaming is rejects, with the message holding text.
async function rejectsNaming(what, p, code, text) {
	let err;
	try {
		await p;
	} catch (e) {
		err = e;
	}
	await rejects(what, err ? Promise.reject(err) : Promise.resolve(), code);
	assert.ok(String(err.details ?? err.message).includes(text), `${what}: ${err.details ?? err.message}, want it to hold ${text}`);
}

async function main() {
	const client = new Tigris({ serverUrl: url, projectName: project, branch: "main" });
	const rawClient = new TigrisClient(url, grpc.credentials.createInsecure());
	const members = client.getDatabase().getCollection("members");
	const setSchema = (schema) => stub(rawClient, "createOrUpdateCollection", new api.CreateOrUpdateCollectionRequest()
		.setProject(project).setBranch("main").setCollection("members").setSchema(Buffer.from(JSON.stringify(schema))));
	const taken = `duplicate value for unique field 'email': "ann@example.com"`;

	const steps = [
		["create project and collection", async () => {
			const resp = await stub(rawClient, "createProject", new api.CreateProjectRequest().setProject(project));
			assert.equal(resp.getStatus(), "created");
			await setSchema(unique);
		}],

		["insert", async () => {
			await members.insertMany([{ id: 1, email: "ann@example.com" }, { id: 2, email: "bob@example.com" }]);
		}],

		["duplicates refused", async () => {
			await rejectsNaming("insert of a taken email", members.insertOne({ id: 3, email: "ann@example.com" }), ALREADY_EXISTS, taken);
			await rejectsNaming("replace onto a taken email", members.insertOrReplaceOne({ id: 2, email: "ann@example.com" }), ALREADY_EXISTS, taken);
			await rejectsNaming("update to a taken email",
				members.updateMany({ filter: { id: 2 }, fields: { $set: { email: "ann@example.com" } } }), ALREADY_EXISTS, taken);
			const bob = await members.findOne({ filter: { id: 2 } });
			assert.equal(bob.email, "bob@example.com");
		}],

		["own value taken", async () => {
			await members.insertOrReplaceOne({ id: 1, email: "ann@example.com", name: "Ann" });
			assert.equal((await members.findOne({ filter: { id: 1 } })).name, "Ann");
		}],

		["removed, then refused over duplicates", async () => {
			await setSchema(plain);
			await members.insertOne({ id: 3, email: "ann@example.com" });
			await rejectsNaming("adding unique over duplicates", setSchema(unique), INVALID_ARGUMENT,
				`cannot make field 'email' unique: more than one document holds "ann@example.com"`);
		}],

		["delete project", async () => {
			await stub(rawClient, "deleteProject", new api.DeleteProjectRequest().setProject(project));
		}],
	];

	const result = await runSteps(steps);
	rawClient.close();
	finish(resultFile, result);
}

main().catch((e) => {
	console.error(e);
	process.exit(1);
});
