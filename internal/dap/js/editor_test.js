// fred dap as VS Code drives it: the DebugClient that VS Code's own debug
// adapters are tested with. Run by internal/dap's TestDAPWithVSCodeClient:
//
//   node editor_test.js FRED PROGRAM SOURCE LINE TWO_NEXTS SUM_LINE COND I SUM
//
// on a watch fixture: update(i) is called for i = 0, 1, 2...; LINE is its
// first line, TWO_NEXTS where two nexts go, SUM_LINE the line that adds to
// the sum (8 before update(3), 16 after). Exits 0 when every check held.
'use strict';
const assert = require('assert');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const [fred, program, source, line, twoNexts, sumLine, cond, iExpr, sumExpr] = process.argv.slice(2);
const L = Number(line), N2 = Number(twoNexts), S = Number(sumLine);

async function main() {
  const dc = new DebugClient(fred, 'dap', 'fred', {}, true); // the adapter's stderr shows
  dc.defaultTimeout = 60000;
  await dc.start();
  try {
    const thread = { threadId: 1 };
    const top = async () => (await dc.stackTraceRequest(thread)).body.stackFrames[0];
    const value = async (expr) => (await dc.evaluateRequest({ expression: expr, context: 'watch', frameId: 0 })).body.result;
    const at = async (what, wantLine, wantI) => {
      const f = await top();
      assert.equal(f.line, wantLine, `${what}: line`);
      assert.equal(f.source.path, source, `${what}: source`);
      assert.equal(await value(iExpr), wantI, `${what}: ${iExpr}`);
    };
    const stopped = () => dc.waitForEvent('stopped');

    // Launch with a conditional breakpoint, as the editor does: the
    // breakpoints go in between initialized and configurationDone.
    await Promise.all([
      dc.waitForEvent('initialized').then(() => dc.setBreakpointsRequest({
        source: { path: source }, breakpoints: [{ line: L, condition: cond }],
      })).then((r) => {
        assert.ok(r.body.breakpoints[0].verified, 'breakpoint verified');
        return dc.configurationDoneRequest();
      }),
      dc.launch({ program }),
      dc.assertStoppedLocation('breakpoint', { path: source, line: L }),
    ]);
    await at('first stop', L, '3');
    await Promise.all([stopped(), dc.continueRequest(thread)]);
    await at('second stop', L, '4');
    await Promise.all([stopped(), dc.nextRequest(thread)]);
    await Promise.all([stopped(), dc.nextRequest(thread)]);
    await at('two nexts', N2, '4');
    // Two steps back: the earlier line, the earlier values.
    await Promise.all([stopped(), dc.stepBackRequest(thread)]);
    await Promise.all([stopped(), dc.stepBackRequest(thread)]);
    await at('two steps back', L, '4');
    const f = await top();
    const scopes = await dc.scopesRequest({ frameId: f.id });
    const vars = await dc.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
    const named = vars.body.variables.find((v) => v.name === iExpr);
    assert.ok(named, `variables: no ${iExpr} in ${JSON.stringify(vars.body.variables)}`);
    assert.equal(named.value, '4', 'variables: i');
    // fred-reverse-watch in the debug console lands on the last change.
    const [, w] = await Promise.all([stopped(), dc.evaluateRequest({ expression: 'fred-reverse-watch ' + sumExpr, context: 'repl' })]);
    assert.ok(w.body.result.includes('the next step makes it 16'), 'fred-reverse-watch said: ' + w.body.result);
    await at('after fred-reverse-watch', S, '3');
    assert.equal(await value(sumExpr), '8', 'the sum before the change');
    // Back to the previous breakpoint hit.
    await Promise.all([stopped(), dc.reverseContinueRequest(thread)]);
    await at('reverseContinue', L, '3');
  } finally {
    // stop() sends the disconnect request (fred dap answers and exits).
    await dc.stop();
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(err && err.stack || err);
  process.exit(1);
});
