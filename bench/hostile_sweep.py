#!/usr/bin/python3
"""hostile_sweep.py ONNXDBG MODELS OUT [COUNT] [SEED] [ULIMIT_V_KIB]: random mutations of real
models, each run through `inspect`, `lint --json`, `view` and `run` (with tests/public_models.txt's
input shapes), counting what must never happen. With ULIMIT_V_KIB, every command runs with that
address-space limit (`ulimit -v`), as CI systems and containers run it.

Issue 17's acceptance check, as a benchmark (`make hostile-sweep`; Debian's /usr/bin/python3 with
python3-onnx and numpy). For COUNT mutants of the models in MODELS (the public third-party models
and onnxdbg's demo model), written under OUT, it prints:
  crashes      a command killed by a signal (a segfault, an abort, a sanitizer report);
  hangs        a command still running after 120 s;
  bad exits    an exit status other than 0, 1 or 2;
  bad JSON     `lint --json` printing something `json.loads` refuses;
  no cause     a failing command (exit 1 or 2) whose stderr's last line is empty or is not one
               sentence from onnxdbg ("onnxdbg: error: ..." or a verdict line);
  unexpected   "an unexpected error inside onnxdbg" anywhere in the output (an exception no
               check foresaw, std::bad_alloc among them: issue 39);
and the mutants and commands behind each, so that each can be replayed. Exit status 1 when any
count but "no cause" is above 0.

Mutations are those the issue lists: bytes flipped or cut; an attribute set to 0, -1, 2^31, 2^62
or -2^63; a dim made negative or huge; a name emptied; an op type changed (to Scan without its
body, to an op of no domain); a node deleted or moved first; an initializer's data cut or its
data type changed; an external-data location pointing outside the folder; and issue 39's: a node
wrapped in a local function that calls an undefined function or itself, a node output emptied with
its readers' inputs, a sparse initializer with an index out of range, an input of 8 GiB.
"""
import json
import os
import random
import resource
import subprocess
import sys

import onnx
from onnx import TensorProto

EXTREMES = [0, -1, 2**31, 2**62, -(2**63)]
COMMANDS = [
    ["inspect"],
    ["lint", "--json"],
    ["view", "-o", "{out}/page.html"],
    ["run", "--backends", "reference,onnxruntime", "--timeout", "60", "--max-memory", "2GiB"],
]


def run_arguments(models_dir: str) -> dict:
    """tests/public_models.txt's `onnxdbg run` arguments per model file (concrete input shapes)."""
    table = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                         "public_models.txt")
    args = {}
    if os.path.exists(table):
        for line in open(table):
            if line.strip() and not line.startswith("#"):
                parts = line.split()
                args[parts[0]] = parts[1:]
    return args


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    kind = rng.choice(["flip", "cut", "insert"])
    if kind == "cut":
        return bytes(b[: rng.randrange(1, len(b))])
    if kind == "insert":
        at = rng.randrange(len(b))
        return bytes(b[:at] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16))) + b[at:])
    for _ in range(rng.randrange(1, 32)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def mutate_model(m: onnx.ModelProto, rng: random.Random) -> str:
    """Applies one structural mutation in place; returns its description."""
    g = m.graph
    nodes = list(g.node)
    kind = rng.choice(["attr", "dim", "name", "op", "delete", "move", "init_cut", "init_type",
                       "external", "function", "empty_output", "sparse", "big_input"])
    if kind == "function" and nodes:
        return wrap_in_function(m, rng.choice(nodes), rng.choice(["undefined", "self", "mutual"]))
    if kind == "empty_output" and nodes:
        n = rng.choice(nodes)
        if n.output and n.output[0]:
            old = n.output[0]
            n.output[0] = ""
            for r in nodes:
                for k, name in enumerate(r.input):
                    if name == old:
                        r.input[k] = ""
            return f"output {old} of {n.name or n.op_type} and its readers' inputs emptied"
    if kind == "sparse" and g.initializer:
        t = rng.choice(list(g.initializer))
        s = g.sparse_initializer.add()
        s.dims.extend(t.dims)
        s.values.name = t.name
        s.values.data_type = TensorProto.FLOAT
        s.values.dims.append(1)
        s.values.float_data.append(1.0)
        s.indices.data_type = TensorProto.INT64
        s.indices.dims.append(1)
        s.indices.int64_data.append(rng.choice([-1, 2**40, 2**62]))
        g.initializer.remove(t)
        return f"{t.name} made sparse with an index out of range"
    if kind == "big_input" and g.input:
        vi = rng.choice(list(g.input))
        shape = vi.type.tensor_type.shape
        del shape.dim[:]
        for d in (2, 1024, 1024, 1024):
            shape.dim.add().dim_value = d
        return f"input {vi.name} made 2x1024x1024x1024"
    if kind == "attr":
        with_ints = [n for n in nodes for a in n.attribute if a.type in (2, 7)]
        if with_ints:
            n = rng.choice(with_ints)
            a = rng.choice([a for a in n.attribute if a.type in (2, 7)])
            v = rng.choice(EXTREMES)
            if a.type == 2:
                a.i = v
            elif a.ints:
                a.ints[rng.randrange(len(a.ints))] = v
            return f"attribute {a.name} of {n.name or n.op_type} set to {v}"
    if kind == "dim":
        vis = [vi for vi in list(g.input) + list(g.output) + list(g.value_info)
               if vi.type.tensor_type.shape.dim]
        if vis:
            vi = rng.choice(vis)
            d = rng.choice(vi.type.tensor_type.shape.dim)
            d.dim_value = rng.choice([-1, -(2**40), 2**40, 2**62])
            return f"a dim of {vi.name} set to {d.dim_value}"
    if kind == "name":
        vis = list(g.input) + list(g.output)
        vi = rng.choice(vis)
        old = vi.name
        vi.name = ""
        return f"name of {old} emptied"
    if kind == "op" and nodes:
        n = rng.choice(nodes)
        old = n.op_type
        n.op_type = rng.choice(["Scan", "Loop", "If", "Conv", "Reshape", "NoSuchOp"])
        return f"{n.name or old} changed from {old} to {n.op_type}"
    if kind == "delete" and nodes:
        i = rng.randrange(len(nodes))
        del g.node[i]
        return f"node {i} deleted"
    if kind == "move" and len(nodes) > 1:
        i = rng.randrange(1, len(nodes))
        n = onnx.NodeProto()
        n.CopyFrom(g.node[i])
        del g.node[i]
        g.node.insert(0, n)
        return f"node {i} moved first"
    inits = [t for t in g.initializer if t.raw_data]
    if kind == "init_cut" and inits:
        t = rng.choice(inits)
        t.raw_data = t.raw_data[: len(t.raw_data) // 2]
        return f"raw_data of {t.name} cut in half"
    if kind == "init_type" and g.initializer:
        t = rng.choice(list(g.initializer))
        t.data_type = rng.choice([0, 8, 9, 17, 23, 99])
        return f"data type of {t.name} set to {t.data_type}"
    if kind == "external" and g.initializer:
        t = rng.choice(list(g.initializer))
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        loc = rng.choice(["../../../etc/passwd", "/etc/passwd", "passwd-link", "missing.bin"])
        e = t.external_data.add()
        e.key, e.value = "location", loc
        if rng.random() < 0.5:
            e = t.external_data.add()
            e.key, e.value = "offset", rng.choice(["1e3", "-8", "99999999999999999999"])
        return f"{t.name} made external at {loc}"
    return "unchanged"


def wrap_in_function(m: onnx.ModelProto, n: onnx.NodeProto, how: str) -> str:
    """Moves `n` into a local function "wrapped" of domain "hostile" and calls it in its place;
    the function's body also calls an undefined function, itself, or a second function that
    calls it back."""
    f = m.functions.add()
    f.name, f.domain = "wrapped", "hostile"
    f.input.extend(f"in{k}" for k in range(len(n.input)))
    f.output.extend(f"out{k}" for k in range(len(n.output)))
    f.opset_import.extend(m.opset_import)
    f.opset_import.add(domain="hostile", version=1)
    body = f.node.add()
    body.CopyFrom(n)
    body.ClearField("name")
    body.input[:] = [f"in{k}" if name else "" for k, name in enumerate(n.input)]
    body.output[:] = [f"t{k}" for k in range(len(n.output))]
    callee = {"undefined": "nowhere", "self": "wrapped", "mutual": "partner"}[how]
    f.node.add(op_type=callee, domain="hostile", input=["t0"], output=["out0"])
    for k in range(1, len(n.output)):
        f.node.add(op_type="Identity", input=[f"t{k}"], output=[f"out{k}"])
    if how == "mutual":
        p = m.functions.add(name="partner", domain="hostile", input=["a"], output=["b"])
        p.opset_import.extend(f.opset_import)
        p.node.add(op_type="wrapped", domain="hostile", input=["a"], output=["b"])
    n.op_type, n.domain = "wrapped", "hostile"
    n.ClearField("attribute")
    if not any(o.domain == "hostile" for o in m.opset_import):
        m.opset_import.add(domain="hostile", version=1)
    return f"{n.name or 'a node'} wrapped in a function that calls {callee} ({how})"


def last_line(text: str) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


def main() -> int:
    onnxdbg, models_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 17)
    ulimit_kib = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] else 0

    def limit_memory():
        if ulimit_kib:
            resource.setrlimit(resource.RLIMIT_AS, (ulimit_kib * 1024, ulimit_kib * 1024))
    os.makedirs(out, exist_ok=True)
    link = os.path.join(out, "passwd-link")
    if not os.path.lexists(link):
        os.symlink("/etc/passwd", link)
    sources = sorted(os.path.join(models_dir, f) for f in os.listdir(models_dir)
                     if f.endswith(".onnx"))
    originals = {s: open(s, "rb").read() for s in sources}
    extra = run_arguments(models_dir)
    counts = {"runs": 0, "crashes": 0, "hangs": 0, "bad exits": 0, "bad JSON": 0, "no cause": 0,
              "unexpected": 0}
    examples = {k: [] for k in counts}
    exits = {c[0]: {} for c in COMMANDS}
    for i in range(count):
        src = rng.choice(sources)
        path = os.path.join(out, f"mutant{i:04d}.onnx")
        if rng.random() < 0.3:
            data, what = mutate_bytes(originals[src], rng), "bytes"
        else:
            m = onnx.load_from_string(originals[src])
            what = "; ".join(mutate_model(m, rng) for _ in range(rng.randrange(1, 3)))
            data = m.SerializeToString()
        with open(path, "wb") as f:
            f.write(data)
        for cmd in COMMANDS:
            args = [onnxdbg] + [a.format(out=out) for a in cmd] + [path]
            if cmd[0] == "run":
                args += extra.get(os.path.basename(src), [])
            counts["runs"] += 1
            label = f"{os.path.basename(path)} ({os.path.basename(src)}: {what}): {' '.join(cmd)}"
            try:
                # onnxruntime's worker reserves more address space than the limit leaves: only
                # onnxdbg itself runs under it (the worker is exec'd with the limit inherited,
                # so a refused load there is a failed row, which is what a user sees too).
                p = subprocess.run(args, capture_output=True, text=True, errors="replace",
                                   timeout=120, preexec_fn=limit_memory)
            except subprocess.TimeoutExpired:
                counts["hangs"] += 1
                examples["hangs"].append(label)
                continue
            exits[cmd[0]][p.returncode] = exits[cmd[0]].get(p.returncode, 0) + 1
            if p.returncode < 0:
                counts["crashes"] += 1
                examples["crashes"].append(f"{label}: signal {-p.returncode}")
            elif p.returncode not in (0, 1, 2):
                counts["bad exits"] += 1
                examples["bad exits"].append(f"{label}: exit {p.returncode}")
            if "runtime error:" in p.stderr or "AddressSanitizer" in p.stderr:
                counts["crashes"] += 1
                examples["crashes"].append(f"{label}: sanitizer report")
            if "unexpected error inside onnxdbg" in p.stderr + p.stdout:
                counts["unexpected"] += 1
                examples["unexpected"].append(f"{label}: {last_line(p.stderr)!r}")
            if cmd[0] == "lint" and p.returncode in (0, 1, 2):
                try:
                    json.loads(p.stdout)
                except ValueError:
                    counts["bad JSON"] += 1
                    examples["bad JSON"].append(label)
            if p.returncode in (1, 2) and cmd[0] != "lint":
                tail = last_line(p.stderr) or last_line(p.stdout)
                if not tail or "what():" in tail or "terminate called" in tail:
                    counts["no cause"] += 1
                    examples["no cause"].append(f"{label}: {tail!r}")
    print(f"hostile sweep: {count} mutants, " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    for c, by_code in exits.items():
        print(f"  {c}: " + ", ".join(f"exit {k}: {v}" for k, v in sorted(by_code.items())))
    for k, ex in examples.items():
        for e in ex[:10]:
            print(f"  {k}: {e}")
    return 1 if any(counts[k] for k in ("crashes", "hangs", "bad exits", "bad JSON",
                                        "unexpected")) else 0


if __name__ == "__main__":
    sys.exit(main())
