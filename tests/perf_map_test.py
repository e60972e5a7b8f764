#!/usr/bin/env python3
"""`minivm run --perf-map`: /tmp/perf-PID.map names every compiled function and the
runtime's blobs, and jit-PID.dump parses as a jitdump file (tools/perf/Documentation/
jitdump-specification.txt): header, records whose sizes add up to the file, one
JIT_CODE_LOAD per compiled function with its JIT_CODE_DEBUG_INFO and JIT_CODE_UNWINDING_INFO
(.eh_frame and the .eh_frame_hdr indexing it) right before it; the code leaves room after
it for that unwinding info, where perf maps it (tests/test_gdb.py checks that perf then
walks through compiled frames). The
dump goes to $MINIVM_JITDUMP_DIR, else to perf's JIT dump directory under $JITDUMPDIR
or $HOME, never to the current directory.
Prints `N passed, N failed`; exit status 1 on any failure."""
import os
import re
import struct
import subprocess
import sys
import tempfile

from checks import check, finish

MINIVM = os.path.abspath(sys.argv[1])

JIT_CODE_LOAD, JIT_CODE_MOVE, JIT_CODE_DEBUG_INFO, JIT_CODE_CLOSE, JIT_CODE_UNWINDING_INFO = 0, 1, 2, 3, 4
JITDUMP_MAGIC = 0x4A695444  # "JiTD"

PROGRAM = """\
fn square(x: int): int {
    return x * x;
}
@noinline
fn sum_squares(n: int): int {
    var s = 0;
    var i = 0;
    while (i < n) {
        s += square(i);
        i += 1;
    }
    return s;
}
fn main(): int {
    print(sum_squares(100));
    return 7;
}
"""
FUNCTIONS = ["square", "sum_squares", "main"]


def cstr(data, at):
    end = data.index(b"\0", at)
    return data[at:end].decode(), end + 1


def parse_jitdump(data):
    """Returns (header dict, list of records) or raises ValueError."""
    magic, version, total, mach, _pad, pid, ts, flags = struct.unpack_from("<IIIIIIQQ", data, 0)
    header = dict(magic=magic, version=version, total_size=total, elf_mach=mach, pid=pid, timestamp=ts, flags=flags)
    records = []
    off = total
    while off < len(data):
        if off + 16 > len(data):
            raise ValueError(f"truncated record header at {off}")
        rid, size, ts = struct.unpack_from("<IIQ", data, off)
        if size < 16 or off + size > len(data):
            raise ValueError(f"record at {off} has size {size}, file has {len(data)}")
        body = data[off + 16:off + size]
        rec = dict(id=rid, size=size, timestamp=ts, offset=off)
        if rid == JIT_CODE_LOAD:
            pid, tid, vma, addr, csize, index = struct.unpack_from("<IIQQQQ", body, 0)
            name, after = cstr(body, 40)
            rec.update(pid=pid, tid=tid, vma=vma, code_addr=addr, code_size=csize, code_index=index, name=name,
                       code_bytes=len(body) - after)
        elif rid == JIT_CODE_DEBUG_INFO:
            addr, n = struct.unpack_from("<QQ", body, 0)
            at, entries = 16, []
            for _ in range(n):
                eaddr, line, discrim = struct.unpack_from("<QII", body, at)
                fname, at = cstr(body, at + 16)
                entries.append((eaddr, line, discrim, fname))
            rec.update(code_addr=addr, entries=entries, used=at)
        elif rid == JIT_CODE_UNWINDING_INFO:
            usize, hdr_size, mapped = struct.unpack_from("<QQQ", body, 0)
            rec.update(unwinding_size=usize, eh_frame_hdr_size=hdr_size, mapped_size=mapped,
                       unwinding=body[24:24 + usize], payload=len(body) - 24)
        records.append(rec)
        off += size
    if off != len(data):
        raise ValueError("record sizes do not add up to the file size")
    return header, records


with tempfile.TemporaryDirectory() as tmp:
    prog = os.path.join(tmp, "squares.mini")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    dump_dir = os.path.join(tmp, "dumps")
    os.mkdir(dump_dir)
    env = dict(os.environ, MINIVM_JITDUMP_DIR=dump_dir)
    p = subprocess.Popen([MINIVM, "run", "--xcomp", "--perf-map", prog], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=tmp)
    out, err = p.communicate(timeout=60)
    pid = p.pid
    map_path = f"/tmp/perf-{pid}.map"
    dump_path = os.path.join(dump_dir, f"jit-{pid}.dump")
    try:
        check("program runs normally", p.returncode == 7 and out == "328350\n", f"rc={p.returncode} out={out!r} err={err!r}")
        check("no warnings", err == "", err)

        # --- perf map ---
        check("perf map exists", os.path.exists(map_path), map_path)
        lines = open(map_path).read().splitlines() if os.path.exists(map_path) else []
        entries = {}
        for line in lines:
            m = re.fullmatch(r"([0-9a-f]+) ([0-9a-f]+) (.+)", line)
            check("map line is 'START SIZE name' in hex", m is not None, line)
            if m:
                entries.setdefault(m.group(3), []).append((int(m.group(1), 16), int(m.group(2), 16)))
        for fn in FUNCTIONS:
            check(f"map names mini::{fn}", f"mini::{fn}" in entries, "\n".join(lines))
        for blob in ["minivm::call_stub", "minivm::safepoint_blob", "minivm::interpreter::method_entry",
                     "minivm::interpreter::iadd"]:
            check(f"map names {blob}", blob in entries)
        check("every size is positive", all(s > 0 for v in entries.values() for _, s in v))

        # --- jitdump ---
        check("jitdump exists in $MINIVM_JITDUMP_DIR", os.path.exists(dump_path), os.listdir(dump_dir))
        check("no jitdump in the current directory", not os.path.exists(os.path.join(tmp, f"jit-{pid}.dump")))
        data = open(dump_path, "rb").read() if os.path.exists(dump_path) else b""
        try:
            header, records = parse_jitdump(data)
            parsed = True
        except (ValueError, struct.error) as e:
            header, records, parsed = {}, [], False
            check("jitdump parses", False, str(e))
        if parsed:
            check("jitdump parses", True)
            check("header magic JiTD", header["magic"] == 0x4A695444, hex(header["magic"]))
            check("header version 1", header["version"] == 1)
            check("header size 40", header["total_size"] == 40)
            check("header elf_mach EM_X86_64", header["elf_mach"] == 62)
            check("header pid", header["pid"] == pid, f"{header['pid']} != {pid}")
            check("header flags 0 (CLOCK_MONOTONIC)", header["flags"] == 0)
            stamps = [header["timestamp"]] + [r["timestamp"] for r in records]
            check("timestamps never go back", stamps == sorted(stamps))
            check("ends with JIT_CODE_CLOSE", records and records[-1]["id"] == JIT_CODE_CLOSE)
            loads = [r for r in records if r["id"] == JIT_CODE_LOAD]
            check("code indexes count up from 0", [r["code_index"] for r in loads] == list(range(len(loads))))
            for r in loads:
                check(f"{r['name']}: the code bytes are all there", r["code_bytes"] == r["code_size"],
                      f"{r['code_bytes']} != {r['code_size']}")
                check(f"{r['name']}: pid", r["pid"] == pid)
                check(f"{r['name']}: vma == code_addr", r["vma"] == r["code_addr"])
                check(f"{r['name']}: same range as the map", (r["code_addr"], r["code_size"]) in entries.get(r["name"], []))
            # perf maps each range's unwinding info right after its code: no compiled range
            # may start there, or it would hide that info.
            spans = sorted((r["code_addr"], ((r["code_size"] + 7) & ~7) + records[j - 1]["mapped_size"])
                           for j, r in enumerate(records) if r["id"] == JIT_CODE_LOAD and r["name"].startswith("mini::")
                           and records[j - 1]["id"] == JIT_CODE_UNWINDING_INFO)
            check("compiled code leaves room for its unwinding info", len(spans) == len(FUNCTIONS) and
                  all(a + n <= b for (a, n), (b, _) in zip(spans, spans[1:])), str(spans))
            for fn in FUNCTIONS:
                mine = [i for i, r in enumerate(records) if r["id"] == JIT_CODE_LOAD and r["name"] == f"mini::{fn}"]
                check(f"one code load for mini::{fn}", len(mine) == 1, str(mine))
                if len(mine) != 1:
                    continue
                i = mine[0]
                load = records[i]
                unw = records[i - 1] if i > 0 else None
                ok = unw is not None and unw["id"] == JIT_CODE_UNWINDING_INFO
                check(f"mini::{fn}: unwinding info right before its code load", ok)
                if ok:
                    data, hdr = unw["unwinding"], unw["eh_frame_hdr_size"]
                    check(f"mini::{fn}: unwinding info sizes", unw["unwinding_size"] <= unw["payload"] and hdr == 20
                          and unw["mapped_size"] == unw["unwinding_size"], str(unw))
                    eh_frame = data[:len(data) - hdr]
                    version, ptr_enc, count_enc, table_enc, eh_ptr, count, pc, fde = struct.unpack_from(
                        "<BBBBiIii", data, len(eh_frame))
                    check(f"mini::{fn}: .eh_frame_hdr points at the .eh_frame, the code and the FDE",
                          (version, count, eh_ptr) == (1, 1, -(len(eh_frame) + 4))
                          and pc == -(((load["code_size"] + 7) & ~7) + len(eh_frame))
                          and fde == struct.unpack_from("<I", eh_frame, 0)[0] + 4 - len(eh_frame), str(unw))
                    i -= 1
                dbg = records[i - 1] if i > 0 else None
                ok = dbg is not None and dbg["id"] == JIT_CODE_DEBUG_INFO and dbg["code_addr"] == load["code_addr"]
                check(f"mini::{fn}: debug info right before its code load", ok)
                if not ok:
                    continue
                ents = dbg["entries"]
                lo, hi = load["code_addr"], load["code_addr"] + load["code_size"]
                check(f"mini::{fn}: debug entries inside the code", all(lo <= a <= hi for a, _, _, _ in ents))
                check(f"mini::{fn}: first entry at the code start", ents and ents[0][0] == lo)
                check(f"mini::{fn}: entries sorted", [a for a, _, _, _ in ents] == sorted(a for a, _, _, _ in ents))
                check(f"mini::{fn}: lines in the program",
                      all(1 <= l <= PROGRAM.count("\n") for _, l, _, _ in ents), str(ents))
                check(f"mini::{fn}: file is the program's absolute path",
                      all(f == os.path.realpath(prog) for _, _, _, f in ents), str({f for _, _, _, f in ents}))
                check(f"mini::{fn}: padding only after the entries", dbg["used"] <= dbg["size"] - 16)
            # sum_squares spans several lines
            ss = [r for r in records if r["id"] == JIT_CODE_DEBUG_INFO and r["entries"] and
                  any(l["name"] == "mini::sum_squares" and l["code_addr"] == r["code_addr"] for l in loads)]
            check("sum_squares maps pcs to several lines", ss and len({l for _, l, _, _ in ss[0]["entries"]}) >= 4)
    finally:
        for path in (map_path, dump_path):
            if os.path.exists(path):
                os.unlink(path)

    # An unwritable jitdump directory: one warning, the program still runs.
    env = dict(os.environ, MINIVM_JITDUMP_DIR=os.path.join(tmp, "missing"))
    p = subprocess.Popen([MINIVM, "run", "--xint", "--perf-map", prog], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=tmp)
    out, err = p.communicate(timeout=60)
    check("bad MINIVM_JITDUMP_DIR: runs anyway", p.returncode == 7 and out == "328350\n", err)
    check("bad MINIVM_JITDUMP_DIR: one warning", err.count("minivm: --perf-map: cannot create") == 1, err)
    m = f"/tmp/perf-{p.pid}.map"
    check("bad MINIVM_JITDUMP_DIR: the map is still written", os.path.exists(m))
    if os.path.exists(m):
        os.unlink(m)

    # Without $MINIVM_JITDUMP_DIR, perf's convention for JIT dumps (its jvmti agent's): a
    # new directory BASE/.debug/jit/minivm-jit-YYYYMMDD.XXXXXXXX, BASE = $JITDUMPDIR, else
    # $HOME; no word about it, and nothing in the current directory.
    for var in ("JITDUMPDIR", "HOME"):
        base = os.path.join(tmp, var.lower())
        os.mkdir(base)
        cwd = os.path.join(tmp, "cwd-" + var.lower())
        os.mkdir(cwd)
        env = {k: v for k, v in os.environ.items() if k not in ("MINIVM_JITDUMP_DIR", "JITDUMPDIR", "HOME")}
        env[var] = base
        if var == "JITDUMPDIR":
            env["HOME"] = os.path.join(tmp, "no-such-home")  # would fail, and warn, if it were used
        p = subprocess.Popen([MINIVM, "run", "--xint", "--perf-map", prog], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
        out, err = p.communicate(timeout=60)
        jit_dir = os.path.join(base, ".debug", "jit")
        made = os.listdir(jit_dir) if os.path.isdir(jit_dir) else []
        dumps = [os.path.join(jit_dir, d, f"jit-{p.pid}.dump") for d in made
                 if re.fullmatch(r"minivm-jit-\d{8}\.\w{8}", d)]
        check(f"${var}: runs without a word", p.returncode == 7 and out == "328350\n" and err == "", err)
        check(f"${var}: the dump is in ${var}/.debug/jit/minivm-jit-YYYYMMDD.XXXXXXXX/",
              len(dumps) == 1 and os.path.exists(dumps[0]), made)
        check(f"${var}: the dump starts with the jitdump magic",
              dumps and os.path.exists(dumps[0]) and open(dumps[0], "rb").read(4) == struct.pack("<I", JITDUMP_MAGIC))
        check(f"${var}: nothing in the current directory", os.listdir(cwd) == [], os.listdir(cwd))
        m = f"/tmp/perf-{p.pid}.map"
        if os.path.exists(m):
            os.unlink(m)

finish()
