// What every flow of this directory shares: a refusal with its gRPC code,
// and the run of named steps whose outcome the Go test reads.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");

// rejects waits for p and wants it refused with gRPC code code.
async function rejects(what, p, code) {
	let err;
	try {
		await p;
	} catch (e) {
		err = e;
	}
	assert.ok(err, `${what} succeeded, want gRPC code ${code}`);
	assert.equal(err.code, code, `${what}: ${err.message}`);
}

// runSteps runs each [name, fn] in order, a failure not stopping the
// others, and returns the steps run and those that failed.
async function runSteps(steps) {
	const result = { steps: [], failed: [] };
	for (const [name, fn] of steps) {
		result.steps.push(name);
		try {
			await fn();
			console.log(`ok   ${name}`);
		} catch (e) {
			const why = e.code !== undefined && e.details !== undefined ? `gRPC code ${e.code}: ${e.details}` : e.message;
			console.log(`FAIL ${name}: ${why}`);
			result.failed.push({ step: name, error: why });
		}
	}
	return result;
}

// finish writes the result where the Go test reads it, and exits with
// its verdict.
function finish(resultFile, result) {
	fs.writeFileSync(resultFile, JSON.stringify(result, null, 2));
	process.exit(result.failed.length ? 1 : 0);
}

module.exports = { rejects, runSteps, finish };
