-- Driven by tests/nvim.rs: open the file given in CUDALINT_E2E_FILE with the snippet of
-- editors/nvim attached, wait for the diagnostics Neovim receives, write them one per line
-- ("line:code:first line of the message") to CUDALINT_E2E_OUT, quit.
local root = os.getenv("CUDALINT_E2E_ROOT")
package.path = root .. "/editors/nvim/?.lua;" .. package.path
require("cudalint").setup({ cmd = { os.getenv("CUDALINT_E2E_BIN"), "lsp" } })
vim.cmd("filetype on")
vim.cmd("edit " .. os.getenv("CUDALINT_E2E_FILE"))
vim.wait(20000, function()
  return #vim.diagnostic.get(0) > 0
end, 100)
local out = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?"
  table.insert(out, string.format("%d:%s:%s", d.lnum, code, (d.message:match("^[^\n]*"))))
end
table.insert(out, "filetype:" .. vim.bo.filetype)
vim.fn.writefile(out, os.getenv("CUDALINT_E2E_OUT"))
vim.cmd("qa!")
