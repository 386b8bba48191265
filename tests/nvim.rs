//! A real editor end to end: headless Neovim opens a fixture with editors/nvim/cudalint.lua
//! attached, and the test reads back the diagnostics Neovim received from `cudalint lsp`.
//! .ci/run installs Debian's Neovim (0.7.2, where only vim.lsp.start_client exists).

mod common;

#[test]
fn neovim_shows_the_bank_conflict() {
    let root = common::root();
    let nvim = std::process::Command::new("nvim").arg("--version").output();
    let version = match nvim {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
        _ => panic!("Neovim is needed for this test: apt-get install neovim (.ci/run does)"),
    };
    let out = std::env::temp_dir().join(format!("cudalint-nvim-{}.txt", std::process::id()));
    let status = std::process::Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!(
            "luafile {}",
            root.join("tests/data/nvim/e2e.lua").display()
        ))
        .env("CUDALINT_E2E_ROOT", &root)
        .env("CUDALINT_E2E_BIN", env!("CARGO_BIN_EXE_cudalint"))
        .env(
            "CUDALINT_E2E_FILE",
            root.join("fixtures/examples/tile_transpose.cu"),
        )
        .env("CUDALINT_E2E_OUT", &out)
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(status.success(), "{version} exited with {status}");
    let got = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    assert!(got.contains("filetype:cuda"), "{version}: {got}");
    assert!(
        got.lines().any(|l| l.starts_with(
            "24:CL301:shared load `tile[threadIdx.x][threadIdx.y + j]`: 32-way bank conflict"
        )),
        "{version} received: {got}"
    );
}
