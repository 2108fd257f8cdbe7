-- Neovim's own LSP client drives redlua-lsp (redlua-lsp/tests/neovim.rs
-- runs this headless): it opens $SCRIPT, reads back the diagnostics, a
-- hover and the quick fixes of line 3, applies the preferred fix as the
-- editor does, waits for the diagnostics of the fixed text, and writes
-- what it saw to $RESULT as JSON. Written for Neovim 0.7 (Debian 12's)
-- and later.
local result = {}

local function finish(problem)
  result.problem = problem
  local file = assert(io.open(os.getenv('RESULT'), 'w'))
  file:write(vim.fn.json_encode(result))
  file:close()
  vim.cmd('qall!')
end

local function codes(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(out, { code = d.code or lsp.code, line = d.lnum, col = d.col, message = d.message })
  end
  table.sort(out, function(a, b) return a.line < b.line end)
  return out
end

local ok, problem = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('SCRIPT')))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({
    name = 'redlua-lsp',
    cmd = { os.getenv('REDLUA_LSP') },
    root_dir = vim.fn.fnamemodify(os.getenv('SCRIPT'), ':h'),
  })
  if not id then return 'the client did not start' end
  vim.lsp.buf_attach_client(buf, id)
  if not vim.wait(30000, function() return #vim.diagnostic.get(buf) >= 2 end, 20) then
    return 'no diagnostics within 30 s'
  end
  result.diagnostics = codes(buf)
  local client = vim.lsp.get_client_by_id(id)
  local document = { uri = vim.uri_from_bufnr(buf) }
  local hover = client.request_sync('textDocument/hover',
    { textDocument = document, position = { line = 2, character = 20 } }, 10000, buf)
  if not (hover and hover.result) then return 'no hover' end
  result.hover = hover.result.contents.value
  local line = vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1]
  local actions = client.request_sync('textDocument/codeAction', {
    textDocument = document,
    range = { start = { line = 2, character = 0 }, ['end'] = { line = 2, character = #line } },
    context = { diagnostics = {} },
  }, 10000, buf)
  if not (actions and actions.result) then return 'no code actions' end
  result.actions = {}
  local preferred
  for _, action in ipairs(actions.result) do
    table.insert(result.actions, action.title)
    if action.isPreferred and not preferred then preferred = action end
  end
  if not preferred then return 'no preferred fix' end
  vim.lsp.util.apply_workspace_edit(preferred.edit, client.offset_encoding)
  result.fixed = vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1]
  local fixed = vim.wait(30000, function() return #vim.diagnostic.get(buf) == 1 end, 20)
  result.after = codes(buf)
  if not fixed then return 'the diagnostics of the fixed text did not come within 30 s' end
  client.stop()
end)
if ok then
  finish(problem)
else
  finish('error: ' .. tostring(problem))
end
