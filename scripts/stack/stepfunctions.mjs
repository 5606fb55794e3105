// The Step Functions API of scripts/stack: StartSyncExecution (what the
// pipeline tools call, package pipeline/stepfunctions) for the template's
// state machines, each executed by aws-local-stepfunctions with its
// lambda:invoke Tasks sent to the stack's Lambda Invoke API
// (scripts/stepfunctions/lambda.mjs). It speaks the service's wire protocol
// (AWS JSON 1.0: POST /, X-Amz-Target: AWSStepFunctions.<Operation>), and
// answers an execution as an Express state machine's synchronous execution:
// SUCCEEDED with its output, or FAILED with the error and cause, and its
// billing details (the billed duration, in 100 ms steps as AWS bills it).
//
// Usage: LOCAL_SFN=.../main.node.esm.js node stepfunctions.mjs LAMBDA_URL MACHINES.json
// MACHINES.json: [{"arn": "...", "definition": {...}}], substitutions made.
// Prints: serving the Step Functions API at http://127.0.0.1:PORT
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { pathToFileURL } from 'node:url';

import { lambdaInvoker } from '../stepfunctions/lambda.mjs';

const { StateMachine } = await import(pathToFileURL(process.env.LOCAL_SFN).href);

const [lambdaURL, machinesFile] = process.argv.slice(2);
if (!lambdaURL || !machinesFile) {
  console.error('usage: node stepfunctions.mjs LAMBDA_URL MACHINES.json');
  process.exit(2);
}

const invoke = lambdaInvoker(lambdaURL);
const machines = new Map();
for (const { arn, definition } of JSON.parse(await readFile(machinesFile, 'utf8'))) {
  const handlers = {};
  for (const [name, state] of Object.entries(definition.States)) {
    if (state.Type !== 'Task') continue;
    if (state.Resource !== 'arn:aws:states:::lambda:invoke') {
      console.error(`${arn}: state ${name}: resource ${state.Resource} is not lambda:invoke, the one integration this stand-in has`);
      process.exit(1);
    }
    handlers[name] = invoke;
  }
  machines.set(arn, { machine: new StateMachine(definition), handlers });
}

function answer(res, status, body, type) {
  const headers = { 'Content-Type': 'application/x-amz-json-1.0' };
  if (type) headers['X-Amzn-ErrorType'] = type;
  res.writeHead(status, headers);
  res.end(JSON.stringify(body));
}

async function startSyncExecution(req) {
  const entry = machines.get(req.stateMachineArn);
  if (!entry) return [400, { __type: 'StateMachineDoesNotExist', message: `State Machine Does Not Exist: '${req.stateMachineArn}'` }];
  const name = req.name || randomUUID();
  const started = Date.now();
  const out = {
    executionArn: req.stateMachineArn.replace(':stateMachine:', ':express:') + `:${name}:${randomUUID()}`,
    stateMachineArn: req.stateMachineArn,
    name,
    startDate: started / 1000,
    input: req.input ?? '{}',
  };
  try {
    const result = await entry.machine.run(JSON.parse(req.input ?? '{}'), {
      overrides: { taskResourceLocalHandlers: entry.handlers },
    }).result;
    Object.assign(out, { status: 'SUCCEEDED', output: JSON.stringify(result) });
  } catch (err) {
    const cause = err.cause instanceof Error ? err.cause : err;
    Object.assign(out, { status: 'FAILED', error: cause.name, cause: cause.message });
  }
  const stopped = Date.now();
  out.stopDate = stopped / 1000;
  out.billingDetails = { billedMemoryUsedInMB: 64, billedDurationInMilliseconds: Math.max(100, Math.ceil((stopped - started) / 100) * 100) };
  return [200, out];
}

const server = http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const target = req.headers['x-amz-target'] || '';
  if (req.method !== 'POST' || target !== 'AWSStepFunctions.StartSyncExecution') {
    return answer(res, 400, { __type: 'UnknownOperationException', message: `this stand-in serves StartSyncExecution only, not ${target || req.method}` }, 'UnknownOperationException');
  }
  let parsed;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    return answer(res, 400, { __type: 'SerializationException', message: err.message }, 'SerializationException');
  }
  const [status, out] = await startSyncExecution(parsed);
  answer(res, status, out, out.__type);
});
server.listen(0, '127.0.0.1', () => {
  console.log(`serving the Step Functions API at http://127.0.0.1:${server.address().port}`);
});
