#!/usr/bin/env python3
"""libward from another language: Python's ctypes drives ward_call.

A harness that embeds libward gets what `ward run` gets: the call resolves
its policy from ward.yml and the session, plans once, records call/start
before anything runs and call/result after, and the kernel says no. These
tests load build/lib/libward.so (or $WARD_BUILD/lib/libward.so, or
$WARD_LIBWARD), declare the few
structs and functions they use exactly as include/ward/*.h does, and print
TAP, like the rest of the suite.
"""
import ctypes as C
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("WARD_BUILD", os.path.join(ROOT, "build"))
LIB = os.environ.get("WARD_LIBWARD", os.path.join(BUILD, "lib", "libward.so"))

# enum values, as include/ward/*.h defines them
MODE_READ_ONLY, MODE_WORKSPACE_WRITE, MODE_DANGER = 0, 1, 2
RUNNER_NONE = 0
SUBJECT_COMMAND, SURFACE_API = 0, 0
CAUSE_MODE, HOW_DERIVED = 0, 0  # enum ward_denial_cause, enum ward_denial_how
WARD_EREFUSED = -10005

APPROVE_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p)


class CallOptions(C.Structure):
    """struct ward_call_options, version 1 (include/ward/call.h)."""
    _fields_ = [
        ("version", C.c_uint),
        ("config", C.c_void_p),
        ("provider", C.c_void_p),
        ("session", C.c_void_p),
        ("subject", C.c_int),
        ("surface", C.c_int),
        ("tool", C.c_char_p),
        ("argv", C.POINTER(C.c_char_p)),
        ("operation", C.c_char_p),
        ("paths", C.POINTER(C.c_char_p)),
        ("cwd", C.c_char_p),
        ("summary", C.c_char_p),
        ("escalate", C.c_bool),
        ("escalate_to", C.c_int),
        ("justification", C.c_char_p),
        ("approve", APPROVE_FN),
        ("approve_ctx", C.c_void_p),
    ]


class ExecOptions(C.Structure):
    """struct ward_exec_options, version 2 (include/ward/exec.h)."""
    _fields_ = [
        ("version", C.c_uint),
        ("stdin_fd", C.c_int),
        ("capture_limit", C.c_size_t),
        ("stdout_fd", C.c_int),
        ("stderr_fd", C.c_int),
        ("timeout_ms", C.c_ulong),
        ("kill_grace_ms", C.c_uint),
        ("cwd", C.c_char_p),
        ("envp", C.POINTER(C.c_char_p)),
        ("landlock_via_launcher", C.c_bool),
        ("contain", C.c_uint),
    ]


def load():
    lib = C.CDLL(LIB)
    sig = {
        "ward_version": (C.c_char_p, []),
        "ward_error_last": (C.c_char_p, []),
        "ward_config_new": (C.c_int, [C.POINTER(C.c_void_p)]),
        "ward_config_load": (C.c_int, [C.c_void_p, C.c_void_p]),
        "ward_config_free": (None, [C.c_void_p]),
        "ward_config_provider_new": (C.c_int, [C.POINTER(C.c_void_p), C.c_void_p, C.c_int]),
        "ward_provider_free": (None, [C.c_void_p]),
        "ward_session_create": (C.c_int, [C.POINTER(C.c_void_p), C.c_char_p, C.c_char_p]),
        "ward_session_free": (None, [C.c_void_p]),
        "ward_session_path": (C.c_char_p, [C.c_void_p]),
        "ward_call_options_init": (C.c_int, [C.POINTER(CallOptions), C.c_uint]),
        "ward_call_new": (C.c_int, [C.POINTER(C.c_void_p), C.POINTER(CallOptions)]),
        "ward_call_exec": (C.c_int, [C.c_void_p, C.POINTER(C.c_void_p), C.POINTER(ExecOptions)]),
        "ward_call_free": (None, [C.c_void_p]),
        "ward_call_id": (C.c_char_p, [C.c_void_p]),
        "ward_call_mode": (C.c_int, [C.c_void_p]),
        "ward_exec_options_init": (C.c_int, [C.POINTER(ExecOptions), C.c_uint]),
        "ward_result_exit_code": (C.c_int, [C.c_void_p]),
        "ward_result_denied": (C.c_bool, [C.c_void_p]),
        "ward_result_stdout": (C.c_void_p, [C.c_void_p, C.POINTER(C.c_size_t)]),
        "ward_result_free": (None, [C.c_void_p]),
        "ward_call_denied": (C.c_bool, [C.c_void_p]),
        "ward_call_denial_count": (C.c_size_t, [C.c_void_p]),
        "ward_call_denial": (C.POINTER(Denial), [C.c_void_p, C.c_size_t]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


class Env:
    """A workspace, an outside directory and a private HOME (the session
    store and ward.yml are throwaway)."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="ward-py-", dir="/var/tmp")
        self.ws = os.path.join(self.base, "ws")
        self.home = os.path.join(self.base, "home")
        os.makedirs(self.ws)
        os.makedirs(self.home)
        self.saved = {k: os.environ.get(k) for k in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "TMPDIR")}
        os.environ["HOME"] = self.home
        for k in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "TMPDIR"):
            os.environ.pop(k, None)
        self.cwd = os.getcwd()
        os.chdir(self.ws)

    def close(self):
        os.chdir(self.cwd)
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.base, ignore_errors=True)


class Denial(C.Structure):
    """struct ward_denial (include/ward/denial.h)."""
    _fields_ = [
        ("path", C.c_char_p),
        ("operation", C.c_char_p),
        ("cause", C.c_int),
        ("mode", C.c_int),
        ("rule", C.c_char_p),
        ("source", C.c_char_p),
        ("how", C.c_int),
    ]


def argv_array(words):
    arr = (C.c_char_p * (len(words) + 1))()
    for i, w in enumerate(words):
        arr[i] = w.encode()
    arr[len(words)] = None
    return arr


def run(lib, words, mode_yml=None, session=None):
    """One call through ward_call, the way a harness would make it."""
    if mode_yml:
        os.makedirs(os.path.join(os.environ["HOME"], ".config", "ward"), exist_ok=True)
        with open(os.path.join(os.environ["HOME"], ".config", "ward", "config.yml"), "w") as f:
            f.write("mode: %s\n" % mode_yml)
    cfg = C.c_void_p()
    assert lib.ward_config_new(C.byref(cfg)) == 0
    assert lib.ward_config_load(cfg, None) == 0, lib.ward_error_last()
    prov = C.c_void_p()
    assert lib.ward_config_provider_new(C.byref(prov), cfg, RUNNER_NONE) == 0, lib.ward_error_last()
    opts = CallOptions()
    assert lib.ward_call_options_init(C.byref(opts), 1) == 0
    opts.config = cfg
    opts.provider = prov
    opts.session = session
    opts.subject = SUBJECT_COMMAND
    opts.surface = SURFACE_API
    arr = argv_array(words)
    opts.argv = C.cast(arr, C.POINTER(C.c_char_p))
    call = C.c_void_p()
    assert lib.ward_call_new(C.byref(call), C.byref(opts)) == 0, lib.ward_error_last()
    xo = ExecOptions()
    assert lib.ward_exec_options_init(C.byref(xo), 2) == 0
    xo.capture_limit = 65536
    res = C.c_void_p()
    err = lib.ward_call_exec(call, C.byref(res), C.byref(xo))
    assert err == 0, (err, lib.ward_error_last())
    n = C.c_size_t()
    p = lib.ward_result_stdout(res, C.byref(n))
    out = C.string_at(p, n.value).decode() if p else ""
    facts = {
        "exit": lib.ward_result_exit_code(res),
        "denied": bool(lib.ward_result_denied(res)),
        "stdout": out,
        "mode": lib.ward_call_mode(call),
        "call_id": lib.ward_call_id(call).decode(),
        "call_denied": bool(lib.ward_call_denied(call)),
        "denials": [
            (d.path.decode() if d.path else None, d.operation.decode(), d.cause,
             d.source.decode() if d.source else None, d.how)
            for d in (lib.ward_call_denial(call, i).contents
                      for i in range(lib.ward_call_denial_count(call)))
        ],
    }
    lib.ward_result_free(res)
    lib.ward_call_free(call)
    lib.ward_provider_free(prov)
    lib.ward_config_free(cfg)
    return facts


def t_version(lib, env):
    v = lib.ward_version().decode()
    assert v and v[0].isdigit(), v


def t_read_only_denies(lib, env):
    f = run(lib, ["touch", "made-by-python"])
    assert f["mode"] == MODE_READ_ONLY
    assert f["exit"] != 0 and f["denied"], f
    assert not os.path.exists(os.path.join(env.ws, "made-by-python"))


def t_config_mode_applies(lib, env):
    f = run(lib, ["sh", "-c", "echo hi > made-by-python && cat made-by-python"], mode_yml="workspace-write")
    assert f["mode"] == MODE_WORKSPACE_WRITE
    assert f["exit"] == 0 and not f["denied"] and f["stdout"] == "hi\n", f
    outside = os.path.join(env.base, "outside")
    f = run(lib, ["touch", outside], mode_yml="workspace-write")
    assert f["denied"] and not os.path.exists(outside), f


def t_session_records(lib, env):
    s = C.c_void_p()
    assert lib.ward_session_create(C.byref(s), None, env.ws.encode()) == 0, lib.ward_error_last()
    f = run(lib, ["true"], session=s)
    with open(lib.ward_session_path(s).decode()) as log:
        events = [json.loads(line) for line in log]
    lib.ward_session_free(s)
    kinds = [(e["type"], e.get("call")) for e in events]
    assert ("call/start", f["call_id"]) in kinds, kinds
    assert ("call/result", f["call_id"]) in kinds, kinds
    start = kinds.index(("call/start", f["call_id"]))
    assert kinds.index(("call/result", f["call_id"])) > start


def t_env_scrubbed(lib, env):
    """The harness's secrets do not reach the command: libward scrubs the
    environment in the call itself, whatever front end."""
    os.environ["WARD_PY_TEST_TOKEN"] = "s3cret"
    os.environ["WARD_PY_PLAIN"] = "kept"
    try:
        f = run(lib, ["sh", "-c", 'echo "${WARD_PY_TEST_TOKEN:-gone} $WARD_PY_PLAIN"'])
    finally:
        del os.environ["WARD_PY_TEST_TOKEN"]
        del os.environ["WARD_PY_PLAIN"]
    assert f["stdout"] == "gone kept\n", f


def t_denial_report(lib, env):
    """The call's denial report names the path and the mode's source."""
    target = os.path.join(env.base, "outside-py")
    f = run(lib, ["touch", target])
    assert f["call_denied"], f
    assert (target, "create", CAUSE_MODE, "built-in default", HOW_DERIVED) in f["denials"], f


TESTS = [
    ("ward_version() answers", t_version),
    ("a read-only call through ward_call is denied by the kernel", t_read_only_denies),
    ("ward.yml's mode reaches a ward_call; a write outside the roots is denied", t_config_mode_applies),
    ("a ward_call in a session records call/start, then call/result", t_session_records),
    ("a secret in the harness's environment does not reach a ward_call's command", t_env_scrubbed),
    ("a ward_call's denial report names the path, the mode and its source", t_denial_report),
]


def main():
    print("1..%d" % len(TESTS))
    if not os.path.exists(LIB):
        for i, (name, _) in enumerate(TESTS, 1):
            print("ok %d - python ctypes: %s # SKIP %s is not built" % (i, name, LIB))
        return 0
    lib = load()
    failed = 0
    for i, (name, fn) in enumerate(TESTS, 1):
        env = Env()
        try:
            fn(lib, env)
            print("ok %d - python ctypes: %s" % (i, name))
        except Exception as e:  # a failed assertion or a ctypes error
            failed += 1
            print("not ok %d - python ctypes: %s" % (i, name))
            print("# %r" % (e,))
        finally:
            env.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
