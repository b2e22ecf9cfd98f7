r"""How the Rust benchmarks are judged so that the candidate cannot forge its verdict.

The candidate's code and the code that decides the verdict never share a process, and
the expected values never enter the candidate's sandbox execution:

1. **Split.** Every call of the entry point in a test (``candidate(...)`` in a
   MultiPL-E test file, ``f(...)`` in a self-test) is cut out. The test becomes trusted
   code in which each call is replaced by ``__rb_r::<R>(k)``, "the k-th result, decoded
   as the declared return type ``R``".
2. **Calls** (one sandbox execution): the candidate's program plus a ``main`` that makes
   exactly those calls and prints each result as one line ``\x1eRBV <k> <encoding>``.
   Nothing the candidate's process can read holds an expected value.
3. **Judge** (sandbox executions of their own, without the candidate's code): the
   trusted test is compiled with the codec's strict decoder (beside step 2, and the
   stripped binary is reused for every program judged on the same tests), then run
   on the results as plain data: the original asserts (``assert_eq!``, ``assert!``,
   ``assert_ne!``, tolerances, anything) run with Rust's own ``PartialEq``, and a
   pass line carrying a fresh random nonce is printed only after the last assert.

Why this cannot be forged: whatever lines the candidate prints, the judge only sees
values of the declared return type, so a forged result is a value some (possibly
stateful) implementation could return; an early exit, crash, hang or silence leaves a
result missing, and a missing result is the candidate's failure. A pass needs the
judge's nonce line, which no code of the candidate's ever sees.

Self-tests are model-written, so their trusted half is also screened
(:func:`unsafe_tokens`): no I/O, process, ``unsafe`` or item definitions, which leaves
an assert nothing to do but compute and compare.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from reflexion_bench.environments._rust_syntax import match_close, skip_literal

#: Result lines the candidate's calls binary prints.
RESULT_MARK = "\x1eRBV "

#: The codec's candidate half, ``Enc`` (any std value to one line of text); the judge
#: decodes with :data:`RUST_DECODER`.
#: JSON-like text, exact: floats as Rust's shortest round-trip ``{:?}`` (NaN, inf,
#: -0.0 kept), integers as decimal text, Option and Result tagged, maps as pairs.
#: Kept to what Rust 1.63 (Debian 12's rustc) accepts.
RUST_ENCODER = r"""
#[allow(dead_code, unused_imports)]
mod __rbj {
    //! Exact, typed codec between the candidate's calls binary (encode) and the judge (decode).
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
    use std::hash::Hash;

    pub trait Enc { fn enc(&self, out: &mut String); }
    macro_rules! ints { ($($t:ty),*) => { $(impl Enc for $t { fn enc(&self, out: &mut String) { out.push_str(&self.to_string()); } })* } }
    ints!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
    fn float(x: f64, dbg: String, out: &mut String) {
        if x.is_nan() { out.push_str("NaN") } else if x.is_infinite() { out.push_str(if x > 0.0 { "inf" } else { "-inf" }) } else { out.push_str(&dbg) }
    }
    impl Enc for f64 { fn enc(&self, out: &mut String) { float(*self, format!("{:?}", self), out) } }
    impl Enc for f32 { fn enc(&self, out: &mut String) { float(*self as f64, format!("{:?}", self), out) } }
    impl Enc for bool { fn enc(&self, out: &mut String) { out.push_str(if *self { "true" } else { "false" }) } }
    impl Enc for () { fn enc(&self, out: &mut String) { out.push_str("null") } }
    impl Enc for str {
        fn enc(&self, out: &mut String) {
            out.push('"');
            for ch in self.chars() {
                match ch {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
    }
    impl Enc for String { fn enc(&self, out: &mut String) { self.as_str().enc(out) } }
    impl Enc for char { fn enc(&self, out: &mut String) { let mut b = [0u8; 4]; (&*self.encode_utf8(&mut b)).enc(out) } }
    impl<'a, T: Enc + ?Sized> Enc for &'a T { fn enc(&self, out: &mut String) { (**self).enc(out) } }
    impl<T: Enc + ?Sized> Enc for Box<T> { fn enc(&self, out: &mut String) { (**self).enc(out) } }
    fn seq<'a, T: Enc + 'a, I: Iterator<Item = &'a T>>(it: I, out: &mut String) {
        out.push('[');
        for (k, x) in it.enumerate() { if k > 0 { out.push(','); } x.enc(out); }
        out.push(']');
    }
    impl<T: Enc> Enc for [T] { fn enc(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: Enc> Enc for Vec<T> { fn enc(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: Enc> Enc for VecDeque<T> { fn enc(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: Enc, const N: usize> Enc for [T; N] { fn enc(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: Enc, S> Enc for HashSet<T, S> { fn enc(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: Enc> Enc for BTreeSet<T> { fn enc(&self, out: &mut String) { seq(self.iter(), out) } }
    fn pairs<'a, K: Enc + 'a, V: Enc + 'a, I: Iterator<Item = (&'a K, &'a V)>>(it: I, out: &mut String) {
        out.push('[');
        for (k, (a, b)) in it.enumerate() { if k > 0 { out.push(','); } out.push('['); a.enc(out); out.push(','); b.enc(out); out.push(']'); }
        out.push(']');
    }
    impl<K: Enc, V: Enc, S> Enc for HashMap<K, V, S> { fn enc(&self, out: &mut String) { pairs(self.iter(), out) } }
    impl<K: Enc, V: Enc> Enc for BTreeMap<K, V> { fn enc(&self, out: &mut String) { pairs(self.iter(), out) } }
    // Option and Result are tagged so that Some(None) and None stay apart.
    impl<T: Enc> Enc for Option<T> { fn enc(&self, out: &mut String) { match self { None => out.push_str("null"), Some(x) => { out.push('['); x.enc(out); out.push(']') } } } }
    impl<T: Enc, E: Enc> Enc for Result<T, E> {
        fn enc(&self, out: &mut String) { match self { Ok(x) => { out.push_str("[\"Ok\","); x.enc(out) } Err(e) => { out.push_str("[\"Err\","); e.enc(out) } } out.push(']') }
    }
    macro_rules! tuples { ($(($($n:tt $t:ident),+))*) => { $(impl<$($t: Enc),+> Enc for ($($t,)+) {
        fn enc(&self, out: &mut String) { out.push('['); let mut _first = true; $( if !_first { out.push(','); } _first = false; self.$n.enc(out); )+ out.push(']'); } })* } }
    tuples!((0 A) (0 A, 1 B) (0 A, 1 B, 2 C) (0 A, 1 B, 2 C, 3 D) (0 A, 1 B, 2 C, 3 D, 4 E) (0 A, 1 B, 2 C, 3 D, 4 E, 5 F) (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G) (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H));

    /// One result line: `\n\x1eRBV <k> <encoding>\n`, flushed, so an exit during a later
    /// call keeps the earlier results (the leading newline survives a solution's `print!`).
    pub fn emit<T: Enc + ?Sized>(k: usize, v: &T) {
        use std::io::Write;
        let mut s = format!("\n\x1eRBV {} ", k);
        v.enc(&mut s);
        s.push('\n');
        let out = std::io::stdout();
        let mut lock = out.lock();
        let _ = lock.write_all(s.as_bytes());
        let _ = lock.flush();
    }
}
"""

#: The judge's half: a strict parser and ``Dec`` (no ``Enc``: each binary compiles
#: only its half, rustc time being most of a judgement's cost).
RUST_DECODER = r"""
#[allow(dead_code, unused_imports)]
mod __rbj {
    //! Exact, typed codec between the candidate's calls binary (encode) and the judge (decode).
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
    use std::hash::Hash;

    // ------------------------------------------------------------------ decoding
    pub enum J { Null, Bool(bool), Num(String), Str(String), Arr(Vec<J>) }

    struct P<'a> { s: &'a [u8], i: usize, depth: usize }
    impl<'a> P<'a> {
        fn peek(&self) -> Option<u8> { self.s.get(self.i).copied() }
        fn lit(&mut self, w: &str) -> bool { if self.s[self.i..].starts_with(w.as_bytes()) { self.i += w.len(); true } else { false } }
        fn value(&mut self) -> Result<J, String> {
            self.depth += 1;
            if self.depth > 200 { return Err("nested too deeply".into()); }
            let c = self.peek().ok_or("unexpected end")?;
            let v = if c == b'[' {
                self.i += 1;
                let mut v = Vec::new();
                if self.peek() == Some(b']') { self.i += 1; } else {
                    loop {
                        v.push(self.value()?);
                        match self.peek() { Some(b',') => self.i += 1, Some(b']') => { self.i += 1; break } _ => return Err(format!("expected , or ] at byte {}", self.i)) }
                    }
                }
                J::Arr(v)
            } else if c == b'"' { J::Str(self.string()?) }
            else if self.lit("null") { J::Null } else if self.lit("true") { J::Bool(true) } else if self.lit("false") { J::Bool(false) }
            else if self.lit("NaN") { J::Num("NaN".into()) } else if self.lit("inf") { J::Num("inf".into()) } else if self.lit("-inf") { J::Num("-inf".into()) }
            else {
                let st = self.i;
                while let Some(d) = self.peek() { if d.is_ascii_digit() || b"+-.eE".contains(&d) { self.i += 1 } else { break } }
                if st == self.i { return Err(format!("unexpected byte at {}", st)); }
                J::Num(std::str::from_utf8(&self.s[st..self.i]).unwrap().to_string())
            };
            self.depth -= 1;
            Ok(v)
        }
        fn hex4(&mut self) -> Result<u32, String> {
            let h = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
            self.i += 4;
            u32::from_str_radix(std::str::from_utf8(h).map_err(|_| "bad \\u escape")?, 16).map_err(|_| "bad \\u escape".to_string())
        }
        fn string(&mut self) -> Result<String, String> {
            self.i += 1;
            let mut out: Vec<u8> = Vec::new();
            loop {
                let d = self.peek().ok_or("unterminated string")?;
                self.i += 1;
                if d == b'"' { break; }
                if d != b'\\' { out.push(d); continue; }
                let e = self.peek().ok_or("unterminated string")?;
                self.i += 1;
                match e {
                    b'"' => out.push(b'"'), b'\\' => out.push(b'\\'), b'/' => out.push(b'/'),
                    b'n' => out.push(b'\n'), b't' => out.push(b'\t'), b'r' => out.push(b'\r'),
                    b'u' => {
                        let code = self.hex4()?;
                        let ch = std::char::from_u32(code).ok_or("escape is not a char")?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => return Err("bad escape".into()),
                }
            }
            String::from_utf8(out).map_err(|_| "string is not UTF-8".to_string())
        }
    }

    pub fn parse(text: &str) -> Result<J, String> {
        let mut p = P { s: text.as_bytes(), i: 0, depth: 0 };
        let v = p.value()?;
        if p.i != p.s.len() { return Err(format!("trailing data at byte {}", p.i)); }
        Ok(v)
    }

    pub trait Dec: Sized { fn dec(v: &J) -> Result<Self, String>; }
    fn num(v: &J) -> Result<&str, String> { match v { J::Num(s) => Ok(s), _ => Err("expected a number".into()) } }
    fn arr(v: &J) -> Result<&Vec<J>, String> { match v { J::Arr(a) => Ok(a), _ => Err("expected a list".into()) } }
    macro_rules! dints { ($($t:ty),*) => { $(impl Dec for $t { fn dec(v: &J) -> Result<Self, String> {
        let s = num(v)?; s.parse::<$t>().map_err(|_| format!("{} is not a {}", s, stringify!($t))) } })* } }
    dints!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
    fn dfloat(v: &J) -> Result<&str, String> {
        let s = num(v)?;
        // Only what `{:?}` writes: no integers-as-floats, so the type is the one returned.
        if s == "NaN" || s == "inf" || s == "-inf" || s.contains('.') || s.contains('e') { Ok(s) } else { Err(format!("{} is not a float", s)) }
    }
    impl Dec for f64 { fn dec(v: &J) -> Result<Self, String> { dfloat(v)?.parse().map_err(|_| "bad float".to_string()) } }
    impl Dec for f32 { fn dec(v: &J) -> Result<Self, String> { dfloat(v)?.parse().map_err(|_| "bad float".to_string()) } }
    impl Dec for bool { fn dec(v: &J) -> Result<Self, String> { match v { J::Bool(b) => Ok(*b), _ => Err("expected a bool".into()) } } }
    impl Dec for () { fn dec(v: &J) -> Result<Self, String> { match v { J::Null => Ok(()), _ => Err("expected ()".into()) } } }
    impl Dec for String { fn dec(v: &J) -> Result<Self, String> { match v { J::Str(s) => Ok(s.clone()), _ => Err("expected a string".into()) } } }
    impl Dec for &'static str { fn dec(v: &J) -> Result<Self, String> { Ok(Box::leak(String::dec(v)?.into_boxed_str())) } }
    impl Dec for char { fn dec(v: &J) -> Result<Self, String> {
        let s = String::dec(v)?; let mut it = s.chars();
        match (it.next(), it.next()) { (Some(c), None) => Ok(c), _ => Err("expected one char".into()) } } }
    impl<T: Dec> Dec for Box<T> { fn dec(v: &J) -> Result<Self, String> { Ok(Box::new(T::dec(v)?)) } }
    impl<T: Dec> Dec for Vec<T> { fn dec(v: &J) -> Result<Self, String> { arr(v)?.iter().map(T::dec).collect() } }
    impl<T: Dec> Dec for VecDeque<T> { fn dec(v: &J) -> Result<Self, String> { arr(v)?.iter().map(T::dec).collect() } }
    impl<T: Dec + Eq + Hash> Dec for HashSet<T> { fn dec(v: &J) -> Result<Self, String> { arr(v)?.iter().map(T::dec).collect() } }
    impl<T: Dec + Ord> Dec for BTreeSet<T> { fn dec(v: &J) -> Result<Self, String> { arr(v)?.iter().map(T::dec).collect() } }
    impl<T: Dec, const N: usize> Dec for [T; N] { fn dec(v: &J) -> Result<Self, String> {
        let v: Vec<T> = Vec::dec(v)?; let n = v.len(); v.try_into().map_err(|_| format!("expected {} items, got {}", N, n)) } }
    fn pair<K: Dec, V: Dec>(v: &J) -> Result<(K, V), String> {
        let a = arr(v)?; if a.len() != 2 { return Err("expected a [key, value] pair".into()); } Ok((K::dec(&a[0])?, V::dec(&a[1])?)) }
    impl<K: Dec + Eq + Hash, V: Dec> Dec for HashMap<K, V> { fn dec(v: &J) -> Result<Self, String> { arr(v)?.iter().map(pair).collect() } }
    impl<K: Dec + Ord, V: Dec> Dec for BTreeMap<K, V> { fn dec(v: &J) -> Result<Self, String> { arr(v)?.iter().map(pair).collect() } }
    impl<T: Dec> Dec for Option<T> { fn dec(v: &J) -> Result<Self, String> {
        match v { J::Null => Ok(None), J::Arr(a) if a.len() == 1 => Ok(Some(T::dec(&a[0])?)), _ => Err("expected an Option".into()) } } }
    impl<T: Dec, E: Dec> Dec for Result<T, E> { fn dec(v: &J) -> Result<Self, String> {
        let a = arr(v)?;
        match (a.len(), a.get(0)) {
            (2, Some(J::Str(t))) if t == "Ok" => Ok(Ok(T::dec(&a[1])?)),
            (2, Some(J::Str(t))) if t == "Err" => Ok(Err(E::dec(&a[1])?)),
            _ => Err("expected a Result".into()),
        } } }
    macro_rules! dtuples { ($($n:literal: ($($i:tt $t:ident),+))*) => { $(impl<$($t: Dec),+> Dec for ($($t,)+) {
        fn dec(v: &J) -> Result<Self, String> { let a = arr(v)?; if a.len() != $n { return Err(format!("expected a {}-tuple", $n)); }
            Ok(($($t::dec(&a[$i])?,)+)) } })* } }
    dtuples!(1: (0 A) 2: (0 A, 1 B) 3: (0 A, 1 B, 2 C) 4: (0 A, 1 B, 2 C, 3 D) 5: (0 A, 1 B, 2 C, 3 D, 4 E) 6: (0 A, 1 B, 2 C, 3 D, 4 E, 5 F) 7: (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G) 8: (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H));
}"""

#: The judge's runtime: results come on stdin (after the nonce line), one
#: ``<k> <encoding>`` per line; a missing or unreadable result ends the run with its
#: own exit code (3, 4), and only a test that returns prints ``\x1eRBPASS <nonce>``.
JUDGE_RUNTIME = r"""
// Trusted code: results are written once, before the test runs, then only read.
static mut __RB_RESULTS: Vec<Option<String>> = Vec::new();
#[allow(dead_code)]
fn __rb_r<T: __rbj::Dec>(k: usize) -> T {
    let text = unsafe { __RB_RESULTS.get(k).cloned().flatten() };
    let text = match text {
        Some(t) => t,
        None => { eprintln!("\x1eRBMISSING {}", k); std::process::exit(3) }
    };
    match __rbj::parse(&text).and_then(|j| <T as __rbj::Dec>::dec(&j)) {
        Ok(v) => v,
        Err(e) => { eprintln!("\x1eRBMALFORMED {} {}", k, e); std::process::exit(4) }
    }
}
fn __rb_load() -> String {
    use std::io::Read;
    let mut all = String::new();
    let _ = std::io::stdin().read_to_string(&mut all);
    let mut lines = all.split('\n');
    let nonce = lines.next().unwrap_or("").to_string();
    for line in lines {
        if let Some((k, t)) = line.split_once(' ') {
            if let Ok(k) = k.parse::<usize>() {
                unsafe {
                    if __RB_RESULTS.len() <= k { __RB_RESULTS.resize(k + 1, None); }
                    __RB_RESULTS[k] = Some(t.to_string());
                }
            }
        }
    }
    nonce
}
"""

JUDGE_EXIT_MISSING = 3
JUDGE_EXIT_MALFORMED = 4

# --------------------------------------------------------------------------- types

_TYPE_WORDS = frozenset(
    [
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "f32",
        "f64",
        "bool",
        "char",
        "str",
        "String",
        "Vec",
        "VecDeque",
        "Option",
        "Result",
        "HashMap",
        "HashSet",
        "BTreeMap",
        "BTreeSet",
        "Box",
        "std",
        "collections",
        "static",
    ]
)
_TYPE_TOKEN = re.compile(r"\s+|[A-Za-z_]\w*|'static\b|\d+|::|[<>,()\[\];&]")


def decodable_type(ret: str) -> str | None:
    """``ret`` as a type the judge can decode into, or None.

    Only standard types (numbers, bool, char, strings, the std collections, Option,
    Result, Box, tuples, arrays) qualify: the text is pasted into the judge's source,
    so it must not carry code, and the judge knows no type of the candidate's.
    A returned ``&str`` becomes ``&'static str`` (the judge leaks the decoded string).
    """
    text = ret.strip()
    pos = 0
    while pos < len(text):
        m = _TYPE_TOKEN.match(text, pos)
        if m is None:
            return None
        tok = m.group(0)
        if (tok[0].isalpha() or tok[0] == "_") and tok not in _TYPE_WORDS:
            return None
        pos = m.end()
    if not text or text == "()":
        return "()" if text == "()" else None
    if text.count("<") != text.count(">"):
        return None
    return re.sub(r"&\s*(?:'static\s+)?str\b", "&'static str", text)


# --------------------------------------------------------------------------- splitting


class Unsplittable(ValueError):
    """A test the judge cannot take apart (the entry point used other than as a call)."""


def _ident_at(code: str, i: int) -> str:
    m = re.match(r"[A-Za-z_]\w*", code[i:])
    return m.group(0) if m else ""


def split_calls(
    text: str, names: set[str], entry: str, ret: str, first: int
) -> tuple[str, list[str]]:
    """Cut every call of ``names`` out of ``text``.

    Returns the trusted text, where the k-th call became ``__rb_r::<ret>(first + k)``,
    and the calls themselves (spelled with ``entry``; a call nested in another's
    arguments stays inside the outer call). Raises :class:`Unsplittable` when a name
    is left that is not a call (passed as a value, aliased), since the trusted text
    would then need the candidate's code.
    """
    out: list[str] = []
    calls: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        j = skip_literal(text, i)
        if j != i:
            out.append(text[i:j])
            i = j
            continue
        word = _ident_at(text, i)
        if not word:
            out.append(text[i])
            i += 1
            continue
        prev = text[:i].rstrip()
        after = i + len(word)
        k = after
        while k < n and text[k] in " \t\n":
            k += 1
        if word in names and not prev.endswith(".") and k < n and text[k] == "(":
            close = match_close(text, k)
            if close < 0:
                raise Unsplittable(f"unbalanced parentheses after `{word}(`")
            # `Solution::f(...)`: the path belongs to the call.
            path = re.search(r"(?:\b[A-Za-z_]\w*\s*::\s*)+$", "".join(out))
            if path and prev.endswith("::"):
                joined = "".join(out)
                out = [joined[: path.start()]]
                head = path.group(0)
            else:
                head = ""
            args = _rename_calls(text[k + 1 : close], names, entry)
            calls.append(f"{head}{entry}({args})")
            out.append(f"__rb_r::<{ret}>({first + len(calls) - 1})")
            i = close + 1
            continue
        if word in names and not prev.endswith("."):
            raise Unsplittable(f"`{word}` is used other than as a call")
        out.append(word)
        i = after
    return "".join(out), calls


def _rename_calls(text: str, names: set[str], entry: str) -> str:
    """Calls of ``names`` spelled with ``entry`` (``candidate(x)`` -> ``f(x)``)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        j = skip_literal(text, i)
        if j != i:
            out.append(text[i:j])
            i = j
            continue
        word = _ident_at(text, i)
        if word:
            prev = text[:i].rstrip()
            out.append(entry if word in names and not prev.endswith(".") else word)
            i += len(word)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


#: What a self-test's trusted half may not name: anything that reaches I/O, processes,
#: memory or the judge's own runtime, or defines items. Without these a test can only
#: compute values and assert; it can neither print the pass line nor learn its nonce.
_DENIED = frozenset(
    [
        "unsafe",
        "extern",
        "asm",
        "global_asm",
        "fn",
        "impl",
        "mod",
        "use",
        "static",
        "trait",
        "struct",
        "enum",
        "macro_rules",
        "io",
        "fs",
        "os",
        "env",
        "net",
        "process",
        "thread",
        "mem",
        "ptr",
        "sync",
        "cell",
        "ffi",
        "File",
        "OpenOptions",
        "Command",
        "stdin",
        "stdout",
        "stderr",
        "print",
        "println",
        "eprint",
        "eprintln",
        "write",
        "writeln",
        "dbg",
        "exit",
        "abort",
        "include",
        "include_str",
        "include_bytes",
        "transmute",
        "forget",
        "libc",
        "set_hook",
        "take_hook",
        "catch_unwind",
        "resume_unwind",
        "Drop",
    ]
)


def unsafe_tokens(text: str) -> list[str]:
    """The denied tokens in a self-test's trusted half (empty when it may run)."""
    bad: list[str] = []
    i = 0
    while i < len(text):
        j = skip_literal(text, i)
        if j != i:
            i = j
            continue
        if text[i] == "#" or text.startswith("r#", i):
            bad.append("#")
            i += 1
            continue
        word = _ident_at(text, i)
        if word:
            if word in _DENIED or (word.lower().startswith("__rb") and word != "__rb_r"):
                bad.append(word)
            i += len(word)
        else:
            i += 1
    return sorted(set(bad))


@dataclass
class CallPlan:
    """Tests taken apart: the calls, which test makes which, and the trusted halves."""

    ret: str
    calls: list[str] = field(default_factory=list)
    groups: list[list[int]] = field(default_factory=list)
    judge_bodies: list[str] = field(default_factory=list)
    #: Tests the judge will not run, with the reason (shown as the test's error).
    unjudged: dict[int, str] = field(default_factory=dict)
    #: Trusted items outside the tests (a MultiPL-E file's helpers, ``use`` lines).
    prelude: str = ""

    def readable(self, text: str) -> str:
        """``text`` (a panic message of the judge) with each result placeholder shown
        as the call it stands for."""
        for k in range(len(self.calls) - 1, -1, -1):
            text = text.replace(f"__rb_r::<{self.ret}>({k})", self.calls[k])
        return text

    def spec(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "groups": self.groups,
            "ret": self.ret,
            "bodies": self.judge_bodies,
            "prelude": self.prelude,
        }


def plan_self_tests(tests: list[str], entry: str, ret: str) -> CallPlan:
    """One group per self-test; a test that cannot be split, or whose trusted half is
    not plain computation (:func:`unsafe_tokens`), is left unjudged with the reason."""
    plan = CallPlan(ret=ret)
    for i, test in enumerate(tests):
        try:
            body, calls = split_calls(test, {entry, "candidate"}, entry, ret, len(plan.calls))
        except Unsplittable as exc:
            plan.unjudged[i] = f"not judged: {exc}"
            body, calls = "", []
        bad = unsafe_tokens(body) if calls else []
        if calls and bad:
            plan.unjudged[i] = "not judged: the test's expected side uses " + ", ".join(
                f"`{b}`" for b in bad
            )
            calls = []
        if not calls and i not in plan.unjudged:
            plan.unjudged[i] = f"not judged: the test does not call `{entry}`"
        plan.groups.append(list(range(len(plan.calls), len(plan.calls) + len(calls))))
        plan.calls.extend(calls)
        plan.judge_bodies.append(body if calls else "")
    return plan


_MAIN = re.compile(r"^[ \t]*fn\s+main\s*\(\s*\)\s*\{", re.M)


def plan_test_file(test: str, entry: str, ret: str, uses: list[str]) -> CallPlan:
    """A MultiPL-E test file (``fn main() { let candidate = f; assert_eq!(...); ... }``)
    as one group: its ``main`` becomes the judge's test, every call a result.

    Raises :class:`Unsplittable` if the file has no ``main`` or no call, or uses the
    entry point other than through ``let candidate = f;`` and calls."""
    m = _MAIN.search(test)
    if m is None:
        raise Unsplittable("the test file has no `fn main() {`")
    close = match_close(test, m.end() - 1)
    if close < 0:
        raise Unsplittable("the test file's `fn main` is not closed")
    body = test[m.end() : close]
    outside = test[: m.start()] + test[close + 1 :]
    names = {entry, "candidate"}
    for alias in re.finditer(rf"\blet\s+(\w+)\s*=\s*{re.escape(entry)}\s*;", body):
        names.add(alias.group(1))
    body = re.sub(rf"\blet\s+\w+\s*=\s*{re.escape(entry)}\s*;[ \t]*\n?", "", body)
    judge, calls = split_calls(body, names, entry, ret, 0)
    if not calls:
        raise Unsplittable(f"the test file never calls `{entry}`")
    # Anything else in the file (a helper, a stray `}`) stays trusted; a leftover
    # MultiPL-E closing brace of the completion is dropped.
    outside = outside.strip()
    if outside == "}":
        outside = ""
    if split_calls(outside, names, entry, ret, 0)[1]:  # (raises on any other use)
        raise Unsplittable(f"the test file calls `{entry}` outside `fn main`")
    prelude = "\n".join(uses) + ("\n" + outside if outside else "")
    return CallPlan(
        ret=ret,
        calls=calls,
        groups=[list(range(len(calls)))],
        judge_bodies=[judge],
        prelude=prelude,
    )


# --------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    status: str  # pass | fail | timeout | error
    output: str = ""


def timeout_text(run: dict[str, Any]) -> str:
    """How a run of the driver timed out: past its CPU limit, or still running at the
    wall backstop (a program that sleeps or blocks)."""
    wall = float(run.get("t", 0.0) or 0.0)
    cpu = run.get("cpu")
    if run.get("clock") == "wall" and isinstance(cpu, (int, float)):
        return f"timed out: still running after {wall:.1f}s of wall time (backstop), {cpu:.2f}s CPU"
    if isinstance(cpu, (int, float)):
        return f"timed out after {cpu:.2f}s of CPU time ({wall:.1f}s wall)"
    return f"timed out after {wall:.1f}s"


def candidate_failure(group: dict[str, Any], missing: int | None, hidden: bool) -> Verdict:
    """Why the candidate's calls stopped before result ``missing``: its own failure."""
    status = str(group.get("status"))
    code = group.get("code")
    at = f" on call {missing + 1}" if missing is not None else ""
    if status == "timeout":
        return Verdict("timeout", timeout_text(group) + at)
    if status == "memory":
        return Verdict("fail" if hidden else "error", f"memory limit exceeded{at}")
    if status == "spawn_error":
        return Verdict("error", f"the program could not be started: {group.get('stderr', '')}")
    panic = str(group.get("panic", "")).strip()
    if code == 101:
        return Verdict("fail", panic or f"panicked{at}")
    if code == 0:
        why = (
            f"the program exited (code 0) before returning from call {missing + 1}"
            if (missing is not None)
            else "the program exited without answering"
        )
        return Verdict("fail", why)
    why = f"exit code {code}{at}" + (f"\n{panic}" if panic else "")
    return Verdict("fail" if hidden else "error", why)


def combine(
    group: dict[str, Any],
    judged: dict[str, Any] | None,
    calls: list[int],
    hidden: bool,
) -> Verdict:
    """The verdict of one test from the candidate's calls (``group``) and the judge's
    run (``judged``, None when the judge did not need to run)."""
    results: dict[str, str] = group.get("results") or {}
    stray = group.get("stray") or []
    if stray:
        return Verdict(
            "fail", f"the program printed result lines for calls it was not making ({stray[:3]})"
        )
    first_missing = next((i for i, k in enumerate(calls) if str(k) not in results), None)
    if judged is None:
        return candidate_failure(group, first_missing, hidden)
    jstatus, jcode = judged.get("status"), judged.get("code")
    if judged.get("passed"):
        if first_missing is not None:  # cannot happen: the judge needs every result
            return candidate_failure(group, first_missing, hidden)
        if group.get("status") == "exit" and group.get("code") == 0:
            return Verdict("pass")
        # Every answer was right, but the program did not end cleanly (MultiPL-E's test
        # binary exits 0 only when it ends cleanly).
        failed = candidate_failure(group, None, hidden)
        return Verdict(
            failed.status, failed.output.replace("without answering", "after its last call")
        )
    if jstatus == "timeout":
        return Verdict("timeout", "the test's own code " + timeout_text(judged))
    if jcode == JUDGE_EXIT_MISSING:
        return candidate_failure(group, first_missing, hidden)
    if jcode == JUDGE_EXIT_MALFORMED:
        return Verdict("fail", f"a result the judge cannot read: {judged.get('detail', '')}")
    if jcode == 101:  # an assert failed: the panic for a benchmark, left/right for the actor
        text = (None if hidden else judged.get("short")) or judged.get("detail")
        return Verdict("fail", str(text or "an assert failed"))
    if jcode == 0:
        return Verdict("error", "the test ended before its last assert (it exits)")
    return Verdict(
        "error", f"the test itself failed (exit code {jcode}): {judged.get('detail', '')}"
    )
