#!/usr/bin/env python3
"""An independent reference implementation of stagger's generator and policies.

It exists to make the test vectors in this folder language-neutral and honest: the expected
delays are computed here, in Python, from the documented algorithms, and the Rust tests check
that the library reproduces them bit for bit. Any implementation in any language that follows
the same documented steps (SplitMix64, FNV-1a keys, IEEE double arithmetic in the order written
below, truncation to whole nanoseconds) gets the same numbers.

    python3 vectors/reference.py --write   # regenerate the JSON files
    python3 vectors/reference.py --check   # fail if a committed file differs

Standard library only; Python 3.8 or newer.
"""

import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MASK = (1 << 64) - 1
U64_MAX = MASK
NS = 1
US = 1_000
MS = 1_000_000
S = 1_000_000_000
H = 3_600 * S


# --- Randomness -----------------------------------------------------------------------------

def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & MASK
    return h


class SplitMix64:
    """SplitMix64: the state advances by the golden-ratio odd constant; the output is mixed."""

    def __init__(self, seed: int):
        self.state = seed & MASK

    @classmethod
    def from_key(cls, key: str) -> "SplitMix64":
        return cls(fnv1a64(key.encode("utf-8")))

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def next_f64(self) -> float:
        """The top 53 bits, scaled by 2^-53: a uniform draw from [0, 1)."""
        return float(self.next_u64() >> 11) * (1.0 / float(1 << 53))


# --- Arithmetic shared by the policies ------------------------------------------------------

def nanos(d_ns: int) -> float:
    """A duration as float nanoseconds: seconds * 1e9 + subsecond nanoseconds."""
    return float(d_ns // S) * 1e9 + float(d_ns % S)


def powi(factor: float, exponent: int) -> float:
    """factor^exponent by square-and-multiply, lowest bit first (IEEE multiplications only)."""
    result, square, e = 1.0, factor, exponent
    while e > 0:
        if e & 1:
            result *= square
        e >>= 1
        if e > 0:
            try:
                square *= square
            except OverflowError:  # Python raises where IEEE gives infinity
                square = math.inf
    return result


def mul(a: float, b: float) -> float:
    try:
        return a * b
    except OverflowError:
        return math.inf


def to_duration(ns: float, limit_ns: int) -> int:
    """Truncate to whole nanoseconds, clamped to [0, limit]; negative and NaN give 0."""
    if math.isnan(ns) or ns <= 0:
        whole = 0
    elif ns >= 18446744073709551616.0:
        whole = U64_MAX
    else:
        whole = int(ns)
    limit_u64 = min(limit_ns, U64_MAX)
    return whole if whole < limit_u64 else limit_ns


def ceiling_ns(base_ns: int, factor: float, cap_ns: int, retry: int) -> float:
    v = mul(nanos(base_ns), powi(factor, max(retry, 1) - 1))
    cap = nanos(cap_ns)
    if v < cap:
        return v
    if math.isnan(v):
        return 0.0
    return cap


# --- Policies: each returns a function attempt -> delay in ns, or None ----------------------

def constant(p, rng, failure):
    def next_delay(attempt):
        if failure == "permanent" or attempt >= p["max_attempts"]:
            return None
        return p["base_ns"]
    return next_delay


def immediate(p, rng, failure):
    def next_delay(attempt):
        if failure == "permanent" or attempt >= p["max_attempts"]:
            return None
        return 0
    return next_delay


def no_retry(p, rng, failure):
    return lambda attempt: None


def linear(p, rng, failure):
    def next_delay(attempt):
        if failure == "permanent" or attempt >= p["max_attempts"]:
            return None
        return min(p["base_ns"] * max(attempt, 1), p["cap_ns"])
    return next_delay


def curve_policy(spread, may_exceed_cap=False, draws=True):
    def make(p, rng, failure):
        def next_delay(attempt):
            if failure == "permanent" or attempt >= p["max_attempts"]:
                return None
            if not draws and p["factor"] == 2.0:
                # Without a draw, a doubling curve is exact in integer nanoseconds: a shift
                # saturating at 2^64 - 1, then the cap.
                base, e = p["base_ns"], max(attempt, 1) - 1
                v = 0 if base == 0 else U64_MAX if e >= 64 else min(base << e, U64_MAX)
                return min(v, p["cap_ns"])
            v = ceiling_ns(p["base_ns"], p["factor"], p["cap_ns"], attempt)
            u = rng.next_f64() if draws else 0.0
            limit = U64_MAX * 10 if may_exceed_cap else p["cap_ns"]
            return to_duration(spread(p, v, u), limit)
        return next_delay
    return make


def subtractive(p, v, u):
    return v * (1.0 - p["jitter"] * u)


def proportional(p, v, u):
    r = p["jitter"]
    return v * ((1.0 - r) + 2.0 * r * u)


def equal(p, v, u):
    half = 0.5 * v
    return half + half * u


def decorrelated(p, rng, failure):
    base, cap = nanos(p["base_ns"]), nanos(p["cap_ns"])
    state = {"prev": base}

    def next_delay(attempt):
        if failure == "permanent" or attempt >= p["max_attempts"]:
            return None
        if attempt <= 1:
            state["prev"] = base
        top = 3.0 * state["prev"]
        top = top if top < cap else cap
        sleep = base + (top - base) * rng.next_f64()
        state["prev"] = sleep
        return to_duration(sleep, p["cap_ns"])
    return next_delay


def shape(t: float) -> float:
    return math.pow(2.0, t) * math.tanh(math.sqrt(4.0 * t))


def decorrelated_v2(p, rng, failure):
    base = nanos(p["base_ns"])
    scale = 1.0 / 1.4
    state = {"prev": 0.0}

    def next_delay(attempt):
        if failure == "permanent" or attempt >= p["max_attempts"]:
            return None
        if attempt <= 1:
            state["prev"] = 0.0
        t = float(max(attempt, 1) - 1) + rng.next_f64()
        nxt = shape(t)
        delay = (nxt - state["prev"]) * scale * base
        state["prev"] = nxt
        return to_duration(delay, p["cap_ns"])
    return next_delay


POLICIES = {
    "constant": (constant, {"base_ns": 100 * MS, "max_attempts": 8}),
    "linear": (linear, {"base_ns": 100 * MS, "cap_ns": 10 * S, "max_attempts": 8}),
    "exponential": (curve_policy(lambda p, v, u: v, draws=False),
                    {"base_ns": 100 * MS, "cap_ns": 20 * S, "factor": 2.0, "max_attempts": 8}),
    "exponential-full-jitter": (curve_policy(lambda p, v, u: v * u),
                                {"base_ns": 100 * MS, "cap_ns": 20 * S, "factor": 2.0, "max_attempts": 8}),
    "exponential-equal-jitter": (curve_policy(equal),
                                 {"base_ns": 100 * MS, "cap_ns": 20 * S, "factor": 2.0, "max_attempts": 8}),
    "decorrelated-jitter": (decorrelated, {"base_ns": 100 * MS, "cap_ns": 20 * S, "max_attempts": 8}),
    "decorrelated-jitter-v2": (decorrelated_v2, {"base_ns": 100 * MS, "cap_ns": 20 * S, "max_attempts": 8}),
    "exponential-subtractive-jitter": (curve_policy(subtractive),
                                       {"base_ns": 100 * MS, "cap_ns": 20 * S, "factor": 2.0,
                                        "jitter": 0.2, "max_attempts": 8}),
    "exponential-proportional-jitter": (curve_policy(proportional, may_exceed_cap=True),
                                        {"base_ns": 100 * MS, "cap_ns": 20 * S, "factor": 2.0,
                                         "jitter": 0.2, "max_attempts": 8}),
    "immediate": (immediate, {"max_attempts": 3}),
    "no-retry": (no_retry, {}),
}

CURVE_002 = {"base_ns": 1 * S, "cap_ns": H, "factor": 2.0, "max_attempts": 8}
DELIVERY = dict(CURVE_002, jitter=0.0)


# --- The vectors ----------------------------------------------------------------------------

def case(policy, name, params=None, seed=None, key=None, attempts=None, failure="retryable"):
    """One vector: a policy, its parameters (defaults overridden), a seed or key, and the
    expected delay in nanoseconds (or null for "give up") for each attempt, asked in order."""
    make, defaults = POLICIES[policy]
    p = dict(defaults, **(params or {}))
    rng = SplitMix64.from_key(key) if key is not None else SplitMix64(seed or 0)
    next_delay = make(p, rng, failure)
    if attempts is None:
        attempts = list(range(1, p.get("max_attempts", 1) + 1))
    out = {"name": name, "params": p, "failure": failure, "attempts": attempts,
           "expected_ns": [next_delay(a) for a in attempts]}
    if key is not None:
        out["key"] = key
    else:
        out["seed"] = seed or 0
    return out


def vectors():
    files = {}
    files["constant"] = [
        case("constant", "catalog defaults: 100 ms, 8 attempts, 7 retries"),
        case("constant", "zero base: retry at once", {"base_ns": 0}),
        case("constant", "permanent failure gives up whatever the budget", attempts=[1, 2],
             failure="permanent"),
        case("constant", "attempts past the limit give up", attempts=[8, 9, 4294967295]),
    ]
    files["linear"] = [
        case("linear", "defaults"),
        case("linear", "cap binds", {"base_ns": 3 * S, "cap_ns": 10 * S, "max_attempts": 6}),
    ]
    files["exponential"] = [
        case("exponential", "defaults"),
        case("exponential", "webhook delivery schedule", dict(CURVE_002)),
        case("exponential", "webhook delivery: retry 40 waits the 1 h cap", dict(CURVE_002, max_attempts=41),
             attempts=[39, 40]),
        case("exponential", "webhook delivery: retry 3 at base 100 ms, cap 250 ms waits 250 ms",
             {"base_ns": 100 * MS, "cap_ns": 250 * MS}, attempts=[1, 2, 3]),
        case("exponential", "factor 1.5", {"factor": 1.5, "base_ns": 500 * MS, "cap_ns": 60 * S,
                                           "max_attempts": 16}),
        case("exponential", "huge attempts saturate at the cap", {"max_attempts": 4294967295},
             attempts=[64, 1100, 4294967294]),
    ]
    for policy in ["exponential-full-jitter", "exponential-equal-jitter", "decorrelated-jitter",
                   "decorrelated-jitter-v2", "exponential-subtractive-jitter",
                   "exponential-proportional-jitter"]:
        files[policy] = [
            case(policy, "defaults, seed 0", seed=0),
            case(policy, "defaults, seed 42", seed=42),
            case(policy, "defaults, key delivery-123", key="delivery-123"),
            case(policy, "small cap binds", {"cap_ns": 300 * MS, "max_attempts": 10}, seed=7),
        ]
    files["exponential-full-jitter"].append(
        case("exponential-full-jitter", "factor 1.6, 12 attempts",
             {"factor": 1.6, "max_attempts": 12}, seed=3))
    files["exponential-subtractive-jitter"] += [
        case("exponential-subtractive-jitter", "delivery preset, jitter off", dict(DELIVERY)),
        case("exponential-subtractive-jitter", "delivery preset, jitter 0.2, key delivery-123",
             dict(DELIVERY, jitter=0.2), key="delivery-123"),
        case("exponential-subtractive-jitter", "delivery preset, jitter 0.2, key delivery-124",
             dict(DELIVERY, jitter=0.2), key="delivery-124"),
        case("exponential-subtractive-jitter", "jitter 1: anywhere up to the schedule",
             dict(DELIVERY, jitter=1.0), seed=9),
    ]
    files["exponential-proportional-jitter"].append(
        case("exponential-proportional-jitter", "cenkalti: 500 ms x1.5 +-50%, cap 60 s",
             {"base_ns": 500 * MS, "factor": 1.5, "jitter": 0.5, "cap_ns": 60 * S,
              "max_attempts": 16}, seed=5))
    files["decorrelated-jitter"].append(
        case("decorrelated-jitter", "base equals cap: every draw is the base",
             {"base_ns": 1 * S, "cap_ns": 1 * S, "max_attempts": 5}, seed=1))
    files["immediate"] = [case("immediate", "defaults"),
                          case("immediate", "permanent", failure="permanent", attempts=[1])]
    files["no-retry"] = [case("no-retry", "never retries", attempts=[0, 1, 2])]

    docs = {name.replace("-", "_"): {"policy": name, "cases": cases} for name, cases in files.items()}

    rng_cases = []
    for seed in [0, 1, 42, 1234567, U64_MAX]:
        r = SplitMix64(seed)
        rng_cases.append({"seed": str(seed), "u64": [str(r.next_u64()) for _ in range(5)]})
    for key in ["", "delivery-123", "delivery-124", "é"]:
        r = SplitMix64.from_key(key)
        rng_cases.append({"key": key, "seed": str(fnv1a64(key.encode("utf-8"))),
                          "u64": [str(r.next_u64()) for _ in range(5)]})
    r = SplitMix64(7)
    docs["rng"] = {
        "generator": "splitmix64",
        "note": "u64 values are decimal strings; f64 draws are (u64 >> 11) * 2^-53",
        "cases": rng_cases,
        "f64_seed_7": [r.next_f64() for _ in range(5)],
    }
    return docs


def render(doc) -> str:
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def main(argv):
    mode = argv[1] if len(argv) > 1 else "--check"
    stale = []
    for name, doc in vectors().items():
        path = HERE / f"{name}.json"
        text = render(doc)
        if mode == "--write":
            path.write_text(text)
        elif not path.exists() or path.read_text() != text:
            stale.append(path.name)
    if mode == "--write":
        print(f"wrote {len(vectors())} files to {HERE}")
        return 0
    if stale:
        print("vectors differ from the reference implementation: " + ", ".join(stale))
        return 1
    print(f"{len(vectors())} vector files match the reference implementation")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
