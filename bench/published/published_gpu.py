#!/usr/bin/env python3
"""Published TensorRT-LLM inference figures against hdlab, datasheet vs fitted profiles.

The rows of section 3 of ../shared/validation/published-gpu.md (NVIDIA TensorRT-LLM
docs/source/performance.md: throughput "updated for v0.6.1", first-token latency from
v0.5), predicted with `hdlab cost` on two profiles of each GPU:
  before: profiles/hardware/datasheet/<gpu>.json (datasheet peaks x flat efficiencies)
  after:  profiles/hardware/<gpu>.json (kernel models fitted to kerneldb)
A report for issue 10 (before/after of the kernel fit); issue 11 turns the published set
into validation cases in the project's own format and a CI check.

Assumed settings, fixed before any comparison (what the source implies, not tuned):
  - H100 rows run FP8 weights and FP8 KV cache with FP16 activations: hdlab has one
    precision per model, so the model is fp8 throughout (activations and all-reduces at
    1 byte too: optimistic for the activation traffic and the TP all-reduce).
  - A100 rows run FP16: the model is fp16.
  - Static batching: every request of the batch is prefilled together, then `output`
    decode steps run at batch `batch`. Decode step time grows about linearly with the
    cached context, so the run's mean step is taken as the step at the middle context
    (input + output / 2).
  - Throughput per GPU = batch * output / (prefill + output * mean decode step) / TP,
    which is the published "output tokens/s per GPU" (the A100 table is read as per GPU,
    as the source file says).
  - First-token latency = the prefill of one prompt (no request queueing or runtime
    overhead: hdlab models none).
  - 8 GPUs per node (NVLink inside it): TP <= 4 always stays inside one node.
Usage: bench/published/published_gpu.py [HDLAB] (default build/cli/hdlab), from the root.
"""
import json
import statistics
import subprocess
import sys

HDLAB = sys.argv[1] if len(sys.argv) > 1 else "build/cli/hdlab"
PROFILES = {"H100": "h100-sxm", "A100": "a100-80gb-sxm"}
DTYPE = {"H100": "fp8", "A100": "fp16"}

# gpu, model, batch, tp, input, output, output tokens/s per GPU
THROUGHPUT = [
    ("H100", "7b", 768, 1, 128, 128, 19694), ("H100", "7b", 112, 1, 128, 2048, 6818),
    ("H100", "7b", 80, 1, 2048, 128, 2244), ("H100", "7b", 48, 1, 2048, 2048, 2740),
    ("H100", "70b", 1024, 2, 128, 128, 2657), ("H100", "70b", 480, 4, 128, 2048, 1486),
    ("H100", "70b", 96, 2, 2048, 128, 306), ("H100", "70b", 64, 2, 2048, 2048, 547),
    ("A100", "7b", 384, 1, 128, 128, 5586), ("A100", "7b", 60, 1, 128, 2048, 1928),
    ("A100", "7b", 52, 1, 2048, 128, 591), ("A100", "7b", 64, 2, 2048, 2048, 782),
    ("A100", "70b", 1280, 4, 128, 128, 670), ("A100", "70b", 240, 4, 128, 2048, 525),
    ("A100", "70b", 120, 4, 2048, 128, 79),
]
# gpu, model, tp, input, first-token latency [ms]
FIRST_TOKEN = [
    ("H100", "7b", 1, 128, 7), ("H100", "7b", 1, 2048, 36), ("H100", "70b", 4, 128, 26),
    ("H100", "70b", 4, 2048, 109), ("A100", "7b", 1, 128, 16), ("A100", "7b", 1, 2048, 133),
    ("A100", "70b", 4, 128, 47), ("A100", "70b", 4, 2048, 377),
]


def metrics(gpu, model, profile, tp, prompt, batch, context):
    cmd = [HDLAB, "cost", f"bench/published/llama2-{model}-{DTYPE[gpu]}.json", "--hw", profile, "--tp", str(tp),
           "--prompt", str(prompt), "--prefill-batch", str(batch), "--batch", str(batch), "--context", str(context),
           "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["metrics"]


def profile_path(gpu, which):
    name = PROFILES[gpu]
    return f"profiles/hardware/datasheet/{name}.json" if which == "before" else f"profiles/hardware/{name}.json"


def summary(errors):
    a = [abs(e) for e in errors]
    return (f"median |error| {100 * statistics.median(a):5.1f}%  max {100 * max(a):6.1f}%  "
            f"signed median {100 * statistics.median(errors):+6.1f}%  rows {len(errors)}")


def main():
    rows = []
    for which in ("before", "after"):
        for gpu, model, batch, tp, inp, out, measured in THROUGHPUT:
            m = metrics(gpu, model, profile_path(gpu, which), tp, inp, batch, inp + out // 2)
            predicted = batch * out / (m["prefill_s"] + out * m["decode_step_s"]) / tp
            rows.append(("throughput", which, f"{gpu} {model} b{batch} tp{tp} {inp}/{out}", predicted, measured))
        for gpu, model, tp, inp, measured in FIRST_TOKEN:
            m = metrics(gpu, model, profile_path(gpu, which), tp, inp, 1, inp)
            rows.append(("first_token_ms", which, f"{gpu} {model} tp{tp} in{inp}", 1e3 * m["prefill_s"], measured))
    print(f"{'metric':15} {'row':28} {'measured':>9} {'before':>9} {'err':>7} {'after':>9} {'err':>7}")
    for kind in ("throughput", "first_token_ms"):
        before = [r for r in rows if r[0] == kind and r[1] == "before"]
        after = [r for r in rows if r[0] == kind and r[1] == "after"]
        for b, a in zip(before, after):
            print(f"{kind:15} {b[2]:28} {b[4]:9.1f} {b[3]:9.1f} {100 * (b[3] / b[4] - 1):+6.1f}% "
                  f"{a[3]:9.1f} {100 * (a[3] / a[4] - 1):+6.1f}%")
    print("\nerror = predicted / measured - 1 (throughput: + is too fast; first-token latency: - is too fast)")
    for kind in ("throughput", "first_token_ms"):
        for which in ("before", "after"):
            errs = [r[3] / r[4] - 1 for r in rows if r[0] == kind and r[1] == which]
            print(f"{kind:15} {which:6} {summary(errs)}")


if __name__ == "__main__":
    main()
