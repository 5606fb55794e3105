// Lambda's lambda:invoke integration as Step Functions performs it, for
// aws-local-stepfunctions' taskResourceLocalHandlers: POST the state's
// Payload to a Lambda Invoke API (scripts/stepfunctions/serve, or
// scripts/stack's) and wrap the answer as Step Functions does
// ({ExecutedVersion, Payload, StatusCode}), or throw the function's errorType
// (a function error) or Lambda.<code> (an API error) as the ASL error name.
// Used by run.mjs and scripts/stack/stepfunctions.mjs.

export class TaskError extends Error {
  constructor(name, cause) {
    super(cause);
    this.name = name;
  }
}

// lambdaInvoker returns the local handler of lambda:invoke Task states
// against the Invoke API at baseURL.
export function lambdaInvoker(baseURL) {
  return async function lambdaInvoke({ FunctionName, Payload }) {
    const res = await fetch(`${baseURL}/2015-03-31/functions/${encodeURIComponent(FunctionName)}/invocations`, {
      method: 'POST',
      body: JSON.stringify(Payload),
    });
    const body = await res.text();
    if (res.status !== 200) {
      throw new TaskError('Lambda.' + (res.headers.get('x-amzn-errortype') || 'Unknown'), body);
    }
    if (res.headers.get('x-amz-function-error')) {
      let type = 'Lambda.Unknown';
      try {
        type = JSON.parse(body).errorType || type;
      } catch {}
      throw new TaskError(type, body);
    }
    return { ExecutedVersion: '$LATEST', Payload: JSON.parse(body), StatusCode: 200 };
  };
}
