// Executes the RAG pipeline state machine with aws-local-stepfunctions
// against Switchboard's real step handlers, served by
// scripts/stepfunctions/serve, in every scenario of scenarios.json (each
// failure path included), and checks that
//
//   - the steps that fell back (the output's "fallback" flags, which
//     pipeline.DecodeOutput lists as degraded) are exactly the ones the
//     scenario broke;
//   - each fallback gave the seed's value (the original question, no
//     documents, relevant "yes");
//   - a retrieval that named no stores says how it chose them
//     (store_selection: by score, with no hosted model here), one that named
//     them or fell back says nothing;
//   - an input with skip_grade true (grading turned off) reports
//     grade_skipped, keeps the documents as relevant, and (with "calls")
//     never invokes the grade step;
//   - a scenario with "refused" (the caller's mistake: a store that does not
//     exist, arguments the retriever refuses) ends with a refusal of that
//     kind instead of degrading;
//   - the functions were invoked as often as the scenario's "calls" says
//     (retries), in both engines;
//   - the Go interpreter (shared/statemachine, via the server's /run-local)
//     gives exactly the same output.
//
// A scenario's "input" is merged over the common input. Every step function
// must exist in this build: one missing would make its step fall back in
// every scenario, and the run would prove nothing about it.
//
// Usage: LOCAL_SFN=.../aws-local-stepfunctions/build/main.node.esm.js node run.mjs DEFINITION.asl.json SERVE_URL SCENARIOS.json
// Lambda's lambda:invoke integration is emulated by lambda.mjs:
// aws-local-stepfunctions runs each Task through a local handler that POSTs
// the Payload to the Invoke API.
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

import { lambdaInvoker } from './lambda.mjs';

// The package lives in the test tools' cache (scripts/lib/tools.sh), not
// beside this script: LOCAL_SFN names its entry point.
const { StateMachine } = await import(process.env.LOCAL_SFN ? pathToFileURL(process.env.LOCAL_SFN).href : 'aws-local-stepfunctions');

const [definitionFile, serveURL, scenariosFile] = process.argv.slice(2);
if (!definitionFile || !serveURL || !scenariosFile) {
  console.error('usage: node run.mjs DEFINITION.asl.json SERVE_URL SCENARIOS.json');
  process.exit(2);
}

const ORDER = ['rephrase', 'retrieve', 'grade'];

async function call(path, body) {
  const res = await fetch(serveURL + path, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}: ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

// Task timeouts of one second, in both engines, so the timeout scenarios are quick.
const raw = JSON.parse(await readFile(definitionFile, 'utf8'));
for (const state of Object.values(raw.States)) {
  if (state.Type === 'Task') state.TimeoutSeconds = 1;
}
const { tasks, functions, prefix } = await call('/tasks');
const taskOf = {}; // substitution -> task
for (const t of tasks) taskOf[t.Substitution] = t;
let text = JSON.stringify(raw);
for (const t of tasks) {
  const arn = `arn:aws:lambda:us-east-1:123456789012:function:${prefix}${t.Function.replaceAll('/', '-').replaceAll('_', '-')}`;
  text = text.replaceAll('${' + t.Substitution + '}', arn);
}
const definition = JSON.parse(text);
const missing = tasks.map((t) => t.Function).filter((f) => !functions.includes(f));
if (missing.length) {
  console.error(`stepfunctions: this build has no ${missing.join(', ')}: every pipeline step must exist`);
  process.exit(1);
}

const lambdaInvoke = lambdaInvoker(serveURL);

const handlers = {};
const noWait = {};
for (const [name, state] of Object.entries(definition.States)) {
  if (state.Type !== 'Task') continue;
  if (state.Resource !== 'arn:aws:states:::lambda:invoke') {
    console.error(`state ${name}: resource ${state.Resource} is not lambda:invoke, which this harness emulates`);
    process.exit(1);
  }
  handlers[name] = lambdaInvoke;
  noWait[name] = 0;
}
const machine = new StateMachine(definition);

const { input: common, scenarios } = JSON.parse(await readFile(scenariosFile, 'utf8'));
let failures = 0;
for (const sc of scenarios) {
  const problems = [];
  const input = { ...common, ...(sc.input || {}) };
  await call('/faults', sc.faults);
  let node;
  try {
    node = await machine.run(input, {
      overrides: { taskResourceLocalHandlers: handlers, retryIntervalOverrides: noWait },
    }).result;
  } catch (err) {
    problems.push(`aws-local-stepfunctions: execution failed: ${err.name}: ${err.message}`);
  }
  const nodeCalls = await call('/calls');
  await call('/faults', sc.faults); // afresh: throttle-once counts calls
  const go = await call('/run-local', { definition: JSON.parse(JSON.stringify(raw)), input });
  if (go.error) problems.push(`Go interpreter: ${go.error}`);
  const goCalls = await call('/calls');
  for (const [fn, n] of Object.entries(sc.calls || {})) {
    for (const [engine, calls] of [['aws-local-stepfunctions', nodeCalls], ['Go interpreter', goCalls]]) {
      if ((calls[fn] || 0) !== n) problems.push(`${engine} invoked ${fn} ${calls[fn] || 0} times, want ${n}`);
    }
  }

  const broken = new Set(sc.degraded || []);
  const want = ORDER.filter((s) => broken.has(s));
  if (node && sc.refused) {
    if (node.refusal?.kind !== sc.refused || !node.refusal?.message) {
      problems.push(`refusal ${JSON.stringify(node.refusal)}, want one of kind ${sc.refused} with a message`);
    }
    if ('fallback' in node || 'documents' in node) problems.push('a refused run went on to degrade or answer');
  } else if (node) {
    if (node.refusal) problems.push(`refused ${JSON.stringify(node.refusal)}, want no refusal`);
    const fellBack = ORDER.filter((s) => node.fallback?.[s] === true);
    if (!isDeepStrictEqual(fellBack, want) || ORDER.some((s) => typeof node.fallback?.[s] !== 'boolean')) {
      problems.push(`fallback ${JSON.stringify(node.fallback)}, want exactly ${JSON.stringify(want)} true`);
    }
    if (broken.has('rephrase') && (node.context_input !== input.question || node.rephrased !== false)) {
      problems.push(`rephrase fell back, but context_input is ${JSON.stringify(node.context_input)}`);
    }
    if (broken.has('retrieve') && (node.documents.length !== 0 || node.searched_stores.length !== 0)) {
      problems.push('retrieve fell back, but there are documents');
    }
    if (broken.has('grade') && (node.relevant !== 'yes' || node.graded !== false)) {
      problems.push(`grade fell back, but relevant is ${node.relevant}, graded ${node.graded}`);
    }
    // The steps' retriever has no hosted model: a retrieval naming no stores chose them by score.
    const selection = broken.has('retrieve') || input.stores ? undefined : 'score';
    if (node.store_selection?.by !== selection) {
      problems.push(`store_selection ${JSON.stringify(node.store_selection)}, want by ${selection ?? '(none)'}`);
    }
    const skipped = input.skip_grade === true;
    if (node.grade_skipped !== skipped) problems.push(`grade_skipped is ${node.grade_skipped}, want ${skipped}`);
    if (skipped && (node.relevant !== 'yes' || node.graded !== false || node.steps?.grade?.model !== '')) {
      problems.push(`grading was turned off, but relevant is ${node.relevant}, graded ${node.graded}, grade model ${JSON.stringify(node.steps?.grade?.model)}`);
    }
  }
  if (node) {
    if (node.question !== input.question) problems.push(`question ${JSON.stringify(node.question)} is not the input's`);
    if (!isDeepStrictEqual(node, go.output)) {
      problems.push(`the engines disagree:\n  aws-local-stepfunctions: ${JSON.stringify(node)}\n  Go interpreter:          ${JSON.stringify(go.output)}`);
    }
  }
  if (problems.length) {
    failures++;
    console.log(`stepfunctions FAIL ${sc.name}:\n  ${problems.join('\n  ')}`);
  } else {
    console.log(`stepfunctions ok   ${sc.name} (${sc.refused ? `refused: ${sc.refused}` : `degraded ${JSON.stringify(want)}`})`);
  }
}

console.log(`stepfunctions: ${scenarios.length - failures} of ${scenarios.length} scenarios agree, degrade as the seed says and refuse the caller's mistakes`);
process.exit(failures ? 1 : 0);
