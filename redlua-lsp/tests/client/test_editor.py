"""redlua-lsp driven over stdio by pytest-lsp, as an editor drives it.

The server binary is $REDLUA_LSP (redlua-lsp/tests/editor_client.rs builds
it and runs these tests; tools/ensure-lsp-client installs pytest-lsp).
"""

import os
import pathlib

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SCRIPT = """\
-- redlua: keys=1
local v = redis.call('GETT', KEYS[1])
if redis.call('EXISTS', KEYS[1]) then return 1 end
redis.call('HEXPIRE', KEYS[1], 10, 'FIELDS', 1, 'f')
return 0
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[os.environ["REDLUA_LSP"]]))
async def client(lsp_client: LanguageClient):
    # The server asks the editor to watch Rust sources and manifests.
    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        lsp_client.registrations.extend(params.registrations)

    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"))
    )
    yield
    await lsp_client.shutdown_session()


async def open_script(client: LanguageClient, tmp_path: pathlib.Path) -> str:
    """Opens SCRIPT in a crate whose Cargo.toml targets Redis 7.4; its URI."""
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "x"\n\n[package.metadata.redlua]\ntarget = "redis-7.4"\n'
    )
    (tmp_path / "scripts").mkdir()
    path = tmp_path / "scripts" / "count.lua"
    path.write_text(SCRIPT)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="lua", version=1, text=SCRIPT
            )
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


async def test_diagnostics_have_the_lint_code_and_exact_range(client, tmp_path):
    uri = await open_script(client, tmp_path)
    found = sorted(
        (d.code, d.range.start.line, d.range.start.character, d.range.end.character)
        for d in client.diagnostics[uri]
    )
    # HEXPIRE is on the crate's target (Redis 7.4): no `target_version`.
    assert found == [
        ("integer_condition", 2, 3, 32),
        ("unknown_command", 1, 21, 27),
    ]
    unknown = next(d for d in client.diagnostics[uri] if d.code == "unknown_command")
    assert unknown.severity == types.DiagnosticSeverity.Error
    assert unknown.source == "redlua"
    assert unknown.message.startswith("unknown Redis command `GETT`"), unknown.message


async def test_hover_completion_and_a_quick_fix(client, tmp_path):
    uri = await open_script(client, tmp_path)
    document = types.TextDocumentIdentifier(uri=uri)

    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=document, position=at(3, 14))
    )
    assert hover is not None
    assert hover.contents.value.startswith("**HEXPIRE**"), hover.contents.value
    assert "since Redis 7.4.0" in hover.contents.value, hover.contents.value
    assert "Target: Redis 7.4" in hover.contents.value, hover.contents.value

    items = await client.text_document_completion_async(
        types.CompletionParams(text_document=document, position=at(1, 23))
    )
    labels = {item.label for item in items}
    assert {"GET", "GETEX", "HEXPIRE"} <= labels, sorted(labels)[:20]

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=document,
            range=types.Range(start=at(2, 5), end=at(2, 5)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    preferred = [a for a in actions if a.is_preferred]
    assert [a.title for a in preferred] == ["Compare the integer reply: `== 1`"]
    (edit,) = preferred[0].edit.changes[uri]
    assert edit.new_text == "redis.call('EXISTS', KEYS[1]) == 1"
    assert (edit.range.start, edit.range.end) == (at(2, 3), at(2, 32))


async def test_a_change_republishes(client, tmp_path):
    uri = await open_script(client, tmp_path)
    (watch,) = client.registrations
    assert watch.method == "workspace/didChangeWatchedFiles"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=at(1, 21), end=at(1, 27)), text="'GET'"
                )
            ],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d.code for d in client.diagnostics[uri]] == ["integer_condition"]

    # The local now holds GET's reply: its hover says what the analyzer infers.
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=at(1, 6)
        )
    )
    assert hover is not None
    assert hover.contents.value.startswith(
        "**`v`**: a string or `false` (the reply of GET"
    ), hover.contents.value
    assert "GET of a missing key" in hover.contents.value, hover.contents.value
