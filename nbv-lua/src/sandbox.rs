//! The Lua VM a script runs in, built like Argo CD's `runLua`.
//!
//! Argo CD's production VM (argo-cd `util/lua/lua.go`) starts gopher-lua with
//! `SkipOpenLibs` and opens `package`, `base` and `table`, then calls `OpenSafeOs`. That
//! function registers `time` and `date` under the name of the *table* library
//! (`RegisterModule(lua.TabLibName, …)`), which is already loaded, so it adds nothing:
//! the production VM has **no global `os`**. `PreloadModule("os", SafeOsLoader)` makes
//! `require("os")` return a module with `time` and `date` only. `string`, `math`,
//! `io`, `os` and `coroutine` are absent.
//!
//! The embedded VM is nbv's Lua 5.1 (`nbv-lua/lua`: C Lua 5.1.5 with gopher-lua's
//! `goto` and number formatting), set up the same way, with these deliberate
//! differences, all of them restrictions:
//!
//! - no file access: `dofile`, `loadfile`, `package.loadlib` raise an error that says
//!   so, and `require` only finds preloaded modules (gopher-lua's `require` would
//!   search `package.path`);
//! - `load` and `loadstring` accept source text only: C Lua 5.1 would also load
//!   precompiled bytecode, which it does not verify; gopher-lua cannot load bytecode at
//!   all, so no script that works in Argo CD is refused;
//! - `print` writes to a bounded buffer instead of the process's standard output;
//! - `pcall` (and `coroutine.resume` in the test harness) re-raise once the budget is
//!   spent, so a script cannot catch its own stop;
//! - `xpcall` runs its handler after the stack has unwound (see [`xpcall`]);
//! - `newproxy` is removed: Lua 5.1 runs `__gc` finalizers with hooks off, out of reach
//!   of the budget, and gopher-lua has no finalizers.
//!
//! The test harness is Argo CD's `UseOpenLibs` (its `health_test` harness, a
//! customization with `useOpenLibs: true`, and its built-in scripts): every library
//! gopher-lua has, `io`, the whole `os` and `debug` included, with these differences:
//!
//! - unless `EvalOptions::host_access` is set, it is closed to the machine: every
//!   function of `io` (and any use of `io.stdin`, `io.stdout`, `io.stderr`) and of `os`
//!   beyond `clock`, `date`, `difftime` and `time` raises an error that names it and
//!   the flag of `nbv health` that opens it ([`HOST_ACCESS_FLAG`]). Argo CD's scripts
//!   use `os.date` and `os.time` only, and a suite from a pull request must not run
//!   commands on the machine that tests it;
//! - `debug` has gopher-lua's functions only (`getfenv`, `getinfo`, `getlocal`,
//!   `getmetatable`, `getupvalue`, `setfenv`, `setlocal`, `setmetatable`,
//!   `setupvalue`, `traceback`): no `sethook`, `gethook`, `getregistry` or `debug`,
//!   which would let a script switch off its budget or reach the embedder's state;
//!   `getupvalue` and `setupvalue` see no upvalues in functions written in C (nbv's
//!   own), as they see none in gopher-lua's Go functions;
//! - `os.exit` raises an error instead of ending the process running the check, and
//!   gopher-lua's `os.setenv` is absent;
//! - gopher-lua's `channel` library (Go channels) is absent;
//! - the restrictions above (no `dofile`, `loadfile`, `package.loadlib`, files found
//!   by `require`, bytecode, `newproxy`) still hold.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::chunk::ChunkMode;
use mlua::debug::DebugEvent;
use mlua::{
    Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value, Variadic, VmState,
};

use super::guard::{Guard, STEP};
use super::{EvalOptions, Sandbox};

/// What `print` wrote, up to a limit.
pub(super) struct Printed {
    text: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Printed {
    fn push(&mut self, bytes: &[u8]) {
        let room = self.limit.saturating_sub(self.text.len());
        if bytes.len() > room {
            self.truncated = true;
        }
        self.text.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// The text, with invalid UTF-8 replaced, and whether some was dropped.
    pub(super) fn take(&mut self) -> (String, bool) {
        (
            String::from_utf8_lossy(&std::mem::take(&mut self.text)).into_owned(),
            self.truncated,
        )
    }
}

/// A prepared VM.
pub(super) struct Vm {
    pub(super) lua: Lua,
    pub(super) printed: Rc<RefCell<Printed>>,
}

/// A VM for `options.sandbox`, limited by `options` and `guard`.
pub(super) fn build(options: &EvalOptions, guard: &Rc<Guard>) -> mlua::Result<Vm> {
    super::numbers::use_gopher_lua_format();
    let harness = options.sandbox == Sandbox::TestHarness;
    let lua = if harness {
        open_libs_vm()?
    } else {
        // `os` is opened only to take `time` and `date` from it.
        Lua::new_with(
            StdLib::TABLE | StdLib::PACKAGE | StdLib::OS,
            LuaOptions::default(),
        )?
    };
    lua.set_memory_limit(options.memory_limit.get())?;

    let globals = lua.globals();
    let package: Table = globals.get("package")?;
    let loaded: Table = package.get("loaded")?;

    if harness {
        restrict_debug(&lua, &globals, &loaded)?;
        let os: Table = globals.get("os")?;
        os.raw_set(
            "exit",
            unavailable(
                &lua,
                "os.exit",
                "it would end the program running the health check",
            )?,
        )?;
        if !options.host_access {
            close_host_access(&lua, &globals, &loaded)?;
        }
    } else {
        install_safe_os(&lua, &globals, &package, &loaded)?;
        // gopher-lua has `coroutine` as a separate library, which Argo CD does not open.
        globals.raw_set("coroutine", Value::Nil)?;
        loaded.raw_set("coroutine", Value::Nil)?;
    }
    remove_file_access(&lua, &globals, &package)?;
    // `newproxy` makes userdata with a `__gc` metamethod, which Lua 5.1 runs with hooks
    // off, out of reach of the budget; gopher-lua has no finalizers at all.
    globals.raw_set("newproxy", Value::Nil)?;
    install_text_only_loading(&lua, &globals, options.memory_limit.get(), guard)?;
    let printed = install_print(&lua, &globals, options.max_printed_bytes)?;
    install_uncatchable_stop(&lua, &globals, guard, harness)?;

    let hook_guard = Rc::clone(guard);
    let triggers = HookTriggers::new().every_nth_instruction(STEP).on_calls();
    lua.set_global_hook(triggers, move |_, debug| {
        match debug.event() {
            DebugEvent::Count => hook_guard.step(),
            _ => hook_guard.call(),
        }
        .map(|()| VmState::Continue)
    })?;
    Ok(Vm { lua, printed })
}

/// A VM with every standard library of C Lua 5.1, `debug` included, which mlua only
/// opens in a state it does not call safe.
#[allow(unsafe_code)]
fn open_libs_vm() -> mlua::Result<Lua> {
    // SAFETY: what makes such a state unsafe is `debug` (hooks, the registry, the
    // upvalues of mlua's callbacks) and loading C modules; `restrict_debug` keeps
    // only the functions that cannot reach either, and `remove_file_access` removes
    // `package.loadlib` and the C searchers, before any script runs.
    Ok(unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::default()) })
}

/// gopher-lua's `debug` library: its ten functions, with no view of the upvalues of
/// functions written in C.
fn restrict_debug(lua: &Lua, globals: &Table, loaded: &Table) -> mlua::Result<()> {
    let full: Table = globals.get("debug")?;
    let kept = lua.create_table()?;
    for name in [
        "getfenv",
        "getinfo",
        "getlocal",
        "getmetatable",
        "setfenv",
        "setlocal",
        "setmetatable",
        "traceback",
    ] {
        kept.raw_set(name, full.get::<Function>(name)?)?;
    }
    for name in ["getupvalue", "setupvalue"] {
        let original: Function = full.get(name)?;
        let wrapped = lua.create_function(move |_, args: MultiValue| {
            if let Some(Value::Function(function)) = args.front()
                && function.info().what == "C"
            {
                return Ok(MultiValue::new());
            }
            original.call::<MultiValue>(args)
        })?;
        kept.raw_set(name, wrapped)?;
    }
    globals.raw_set("debug", kept.clone())?;
    loaded.raw_set("debug", kept)?;
    Ok(())
}

/// Argo CD's production `os`: no global, `require("os")` with `time` and `date`.
fn install_safe_os(
    lua: &Lua,
    globals: &Table,
    package: &Table,
    loaded: &Table,
) -> mlua::Result<()> {
    let full: Table = globals.get("os")?;
    let safe = lua.create_table()?;
    for name in ["date", "time"] {
        safe.raw_set(name, full.get::<Function>(name)?)?;
    }
    globals.raw_set("os", Value::Nil)?;
    loaded.raw_set("os", Value::Nil)?;
    // `require("os")`, as Argo CD's `PreloadModule(lua.OsLibName, SafeOsLoader)`.
    let preload: Table = package.get("preload")?;
    preload.raw_set("os", lua.create_function(move |_, ()| Ok(safe.clone()))?)?;
    Ok(())
}

fn remove_file_access(lua: &Lua, globals: &Table, package: &Table) -> mlua::Result<()> {
    const NO_FILES: &str = "nbv's Lua reads no files and loads no C code, whatever the flags";
    for name in ["dofile", "loadfile"] {
        globals.raw_set(name, unavailable(lua, name, NO_FILES)?)?;
    }
    package.raw_set("loadlib", unavailable(lua, "package.loadlib", NO_FILES)?)?;
    package.raw_set("path", "")?;
    package.raw_set("cpath", "")?;
    // Keep the first searcher, `package.preload`, drop those that read files; the second
    // one only adds to `require`'s message why no file was searched.
    let loaders: Table = package.get("loaders")?;
    let preload_searcher: Value = loaders.raw_get(1)?;
    let no_files = lua.create_function(|_, _: MultiValue| {
        Ok("\n\tno file searched: nbv's Lua loads preloaded modules only")
    })?;
    package.raw_set(
        "loaders",
        lua.create_sequence_from([preload_searcher, Value::Function(no_files)])?,
    )?;
    Ok(())
}

/// What `--allow-host-access` of `nbv health` opens; named in the errors of what it opens.
pub(super) const HOST_ACCESS_FLAG: &str = "--allow-host-access";

/// The functions of `os` that reach no further than the clock.
const SAFE_OS: [&str; 4] = ["clock", "date", "difftime", "time"];

/// The test harness without what reaches the machine: `io` and `os` keep their names,
/// but everything of `io` and every function of `os` beyond [`SAFE_OS`] raises an error
/// that names it and the flag that opens it.
fn close_host_access(lua: &Lua, globals: &Table, loaded: &Table) -> mlua::Result<()> {
    const WHY: &str = "it reaches the machine that runs the check";
    let os: Table = globals.get("os")?;
    let closed_os = lua.create_table()?;
    for pair in os.pairs::<String, Value>() {
        let (name, value) = pair?;
        let value = if SAFE_OS.contains(&name.as_str()) || name == "exit" {
            value
        } else {
            Value::Function(closed(lua, &format!("os.{name}"), WHY)?)
        };
        closed_os.raw_set(name, value)?;
    }
    let io: Table = globals.get("io")?;
    let closed_io = lua.create_table()?;
    for pair in io.pairs::<String, Value>() {
        let (name, value) = pair?;
        let qualified = format!("io.{name}");
        let value = match value {
            Value::Function(_) => Value::Function(closed(lua, &qualified, WHY)?),
            // `io.stdin`, `io.stdout`, `io.stderr`: any use of them fails, by name.
            _ => {
                let handle = lua.create_table()?;
                let refuse = closed(lua, &qualified, WHY)?;
                let meta = lua.create_table()?;
                meta.raw_set("__index", refuse.clone())?;
                meta.raw_set("__newindex", refuse)?;
                handle.set_metatable(Some(meta))?;
                Value::Table(handle)
            }
        };
        closed_io.raw_set(name, value)?;
    }
    for (name, table) in [("os", closed_os), ("io", closed_io)] {
        globals.raw_set(name, table.clone())?;
        loaded.raw_set(name, table)?;
    }
    Ok(())
}

/// A function that raises an error saying that `name` is not available and `why`.
fn unavailable(lua: &Lua, name: &str, why: &str) -> mlua::Result<Function> {
    let message = format!("{name} is not available: {why}");
    lua.create_function(move |_, _: MultiValue| -> mlua::Result<()> {
        Err(mlua::Error::runtime(message.clone()))
    })
}

/// A function that raises an error saying that `name` is closed in the test harness,
/// `why`, and which flag opens it.
fn closed(lua: &Lua, name: &str, why: &str) -> mlua::Result<Function> {
    unavailable(
        lua,
        name,
        &format!(
            "nbv's test harness closes it because {why}; for a suite you trust, run \
             `nbv health` with {HOST_ACCESS_FLAG}"
        ),
    )
}

/// VM instructions that compiling one byte of source costs, measured.
const COMPILE_COST: u64 = 8;

/// Precompiled chunks start with this byte (`LUA_SIGNATURE` is `"\x1bLua"`).
const BYTECODE_MARK: u8 = 0x1b;

/// `loadstring(text [, name])` and `load(reader [, name])`, source text only.
fn install_text_only_loading(
    lua: &Lua,
    globals: &Table,
    max_chunk: usize,
    guard: &Rc<Guard>,
) -> mlua::Result<()> {
    let loadstring_guard = Rc::clone(guard);
    let loadstring = lua.create_function(
        move |lua, (text, name): (mlua::LuaString, Option<mlua::LuaString>)| {
            let name = name.map_or_else(|| text.to_string_lossy(), |name| name.to_string_lossy());
            compile(lua, &text.as_bytes(), name, &loadstring_guard)
        },
    )?;
    globals.raw_set("loadstring", loadstring)?;

    let guard = Rc::clone(guard);
    let load = lua.create_function(
        move |lua, (reader, name): (Value, Option<mlua::LuaString>)| {
            let Value::Function(reader) = reader else {
                let found = reader.type_name();
                return Err(mlua::Error::runtime(format!(
                    "bad argument #1 to 'load' (function expected, got {found})"
                )));
            };
            let mut source = Vec::new();
            loop {
                match reader.call::<Value>(())? {
                    Value::Nil => break,
                    Value::String(piece) if piece.as_bytes().is_empty() => break,
                    Value::String(piece) => source.extend_from_slice(&piece.as_bytes()),
                    _ => {
                        return Ok((
                            Value::Nil,
                            Some("reader function must return a string".to_owned()),
                        ));
                    }
                }
                // The pieces live outside Lua's allocator, so bound them here.
                if source.len() > max_chunk {
                    return Ok((Value::Nil, Some("chunk too large".to_owned())));
                }
            }
            let name = name.map_or_else(|| "=(load)".to_owned(), |name| name.to_string_lossy());
            compile(lua, &source, name, &guard)
        },
    )?;
    globals.raw_set("load", load)?;
    Ok(())
}

/// Compiles source text as Lua's `load*` functions do: the function, or `nil` and the
/// error message. Compiling costs about [`COMPILE_COST`] VM instructions per byte,
/// charged to the budget first.
fn compile(
    lua: &Lua,
    source: &[u8],
    name: String,
    guard: &Guard,
) -> mlua::Result<(Value, Option<String>)> {
    let bytes = u64::try_from(source.len()).unwrap_or(u64::MAX);
    guard.charge(bytes.saturating_mul(COMPILE_COST))?;
    if source.first() == Some(&BYTECODE_MARK) {
        return Ok((
            Value::Nil,
            Some("precompiled chunks are not accepted".to_owned()),
        ));
    }
    match lua
        .load(source)
        .set_name(name)
        .set_mode(ChunkMode::Text)
        .into_function()
    {
        Ok(function) => Ok((Value::Function(function), None)),
        Err(mlua::Error::SyntaxError { message, .. }) => Ok((Value::Nil, Some(message))),
        Err(other) => Err(other),
    }
}

fn install_print(lua: &Lua, globals: &Table, limit: usize) -> mlua::Result<Rc<RefCell<Printed>>> {
    let printed = Rc::new(RefCell::new(Printed {
        text: Vec::new(),
        limit,
        truncated: false,
    }));
    let sink = Rc::clone(&printed);
    let tostring: Function = globals.get("tostring")?;
    let print = lua.create_function(move |_, args: Variadic<Value>| {
        // `tostring` may run a `__tostring` metamethod that prints: no borrow of the
        // buffer is held across a call into Lua.
        for (position, arg) in args.into_iter().enumerate() {
            if position > 0 {
                sink.borrow_mut().push(b"\t");
            }
            let text: mlua::LuaString = tostring.call(arg)?;
            sink.borrow_mut().push(&text.as_bytes());
        }
        sink.borrow_mut().push(b"\n");
        Ok(())
    })?;
    globals.raw_set("print", print)?;
    Ok(printed)
}

/// Wraps the functions that catch errors so that a stopped script stays stopped.
fn install_uncatchable_stop(
    lua: &Lua,
    globals: &Table,
    guard: &Rc<Guard>,
    harness: bool,
) -> mlua::Result<()> {
    let pcall: Function = globals.get("pcall")?;
    let mut catchers = vec![(globals.clone(), "pcall")];
    if harness {
        catchers.push((globals.get::<Table>("coroutine")?, "resume"));
    }
    for (table, name) in catchers {
        let original: Function = table.get(name)?;
        let guard = Rc::clone(guard);
        let wrapped = lua.create_function(move |_, args: MultiValue| {
            let results: MultiValue = original.call(args)?;
            guard.check()?;
            Ok(results)
        })?;
        table.raw_set(name, wrapped)?;
    }
    globals.raw_set("xpcall", xpcall(lua, pcall, Rc::clone(guard))?)?;
    Ok(())
}

/// `xpcall(f, handler)` as `pcall(f)`, then `handler(error)` once the stack has unwound.
///
/// Lua 5.1 runs the handler at the point of the error, before unwinding. When the error
/// comes from the budget's hook, hooks are still off at that point (Lua restores them
/// only when a protected call catches the error), so a handler that loops would never
/// be stopped. Running the handler after the catch keeps it under the budget. Without
/// the `debug` library, a handler cannot tell the difference; a handler that fails gives
/// Lua's `error in error handling`.
fn xpcall(lua: &Lua, pcall: Function, guard: Rc<Guard>) -> mlua::Result<Function> {
    lua.create_function(move |lua, (function, handler): (Value, Value)| {
        let mut results: Vec<Value> = pcall.call::<MultiValue>(function)?.into_iter().collect();
        guard.check()?;
        if matches!(results.first(), Some(Value::Boolean(true))) {
            return Ok(MultiValue::from_iter(results));
        }
        let error = if results.len() > 1 {
            results.swap_remove(1)
        } else {
            Value::Nil
        };
        let handled: Vec<Value> = pcall
            .call::<MultiValue>((handler, error))?
            .into_iter()
            .collect();
        guard.check()?;
        let replacement = match handled.as_slice() {
            [Value::Boolean(true), first, ..] => first.clone(),
            [Value::Boolean(true)] => Value::Nil,
            _ => Value::String(lua.create_string("error in error handling")?),
        };
        Ok(MultiValue::from_iter([Value::Boolean(false), replacement]))
    })
}
