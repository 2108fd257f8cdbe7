// Starts redlua-lsp for the Lua files of the workspace, and stops it with
// the extension. The executable is the `redlua.server.path` setting.
'use strict';

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('redlua').get('server.path', 'redlua-lsp');
  client = new LanguageClient(
    'redlua',
    'redlua',
    { command, args: [] },
    { documentSelector: [{ scheme: 'file', language: 'lua' }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
