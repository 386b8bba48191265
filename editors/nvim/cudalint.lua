-- cudalint for Neovim: diagnostics, quick fixes and hover from `cudalint lsp`.
-- Works on Neovim 0.7 (vim.lsp.start_client) and on 0.8+ (vim.lsp.start).
--
--   require("cudalint").setup()                                  -- `cudalint` on PATH
--   require("cudalint").setup({ cmd = { "/path/to/cudalint", "lsp" } })
--
-- With nvim-lspconfig instead, register it as a custom server:
--   require("lspconfig.configs").cudalint = { default_config = {
--     cmd = { "cudalint", "lsp" }, filetypes = { "cuda" },
--     root_dir = require("lspconfig.util").root_pattern("cudalint.toml", ".git") } }
--   require("lspconfig").cudalint.setup({})
local M = {}

local function root_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if vim.fs and vim.fs.find then
    local found = vim.fs.find({ "cudalint.toml", ".git" }, { upward = true, path = vim.fs.dirname(name) })[1]
    if found then
      return vim.fs.dirname(found)
    end
  end
  return vim.fn.getcwd()
end

function M.setup(opts)
  opts = opts or {}
  local cmd = opts.cmd or { "cudalint", "lsp" }
  local group = vim.api.nvim_create_augroup("cudalint", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = { "cuda" },
    callback = function(args)
      local config = { name = "cudalint", cmd = cmd, root_dir = root_of(args.buf) }
      if vim.lsp.start then
        vim.lsp.start(config, { bufnr = args.buf })
      else
        M.client_id = M.client_id or vim.lsp.start_client(config)
        vim.lsp.buf_attach_client(args.buf, M.client_id)
      end
    end,
  })
end

return M
