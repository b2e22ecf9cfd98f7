"""LeetcodeHard-rs's call bridge: the Rust side of ``serve`` mode.

The compiled program answers calls given as JSON argument lists, one per stdin line,
with one JSON line each (``\\x1eRB <answer>``); the Python ``check(candidate)`` of the
Python variant judges the answers as plain data (see ``_rust_driver.mode_serve``), so
both variants share one set of hidden tests. A minimal JSON reader/writer, no crates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class RustFn:
    name: str
    params: tuple[tuple[str, str], ...]
    ret: str
    text: str


#: Support code of the ``serve`` mode: a minimal JSON reader/writer (no crates), kept
#: to what Rust 1.63 (Debian 12's rustc) accepts.
_SERVE_SUPPORT = r"""
#[allow(dead_code)]
mod __rb {
    pub enum Json { Null, Bool(bool), Num(String), Str(String), Arr(Vec<Json>) }

    pub struct P<'a> { s: &'a [u8], i: usize }
    impl<'a> P<'a> {
        pub fn new(s: &'a str) -> Self { P { s: s.as_bytes(), i: 0 } }
        fn ws(&mut self) { while self.i < self.s.len() && (self.s[self.i] as char).is_whitespace() { self.i += 1; } }
        pub fn value(&mut self) -> Json {
            self.ws();
            let c = self.s[self.i];
            if c == b'[' {
                self.i += 1; let mut v = Vec::new(); self.ws();
                if self.s[self.i] == b']' { self.i += 1; return Json::Arr(v); }
                loop {
                    v.push(self.value()); self.ws();
                    let d = self.s[self.i]; self.i += 1;
                    if d == b']' { return Json::Arr(v); }
                }
            } else if c == b'"' {
                self.i += 1; let mut out: Vec<u8> = Vec::new();
                loop {
                    let d = self.s[self.i]; self.i += 1;
                    if d == b'"' { break; }
                    if d != b'\\' { out.push(d); continue; }
                    let e = self.s[self.i]; self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'), b't' => out.push(b'\t'), b'r' => out.push(b'\r'),
                        b'b' => out.push(8), b'f' => out.push(12),
                        b'u' => {
                            let h = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
                            let mut code = u32::from_str_radix(h, 16).unwrap(); self.i += 4;
                            if (0xD800..0xDC00).contains(&code) && self.s[self.i] == b'\\' {
                                let h2 = std::str::from_utf8(&self.s[self.i + 2..self.i + 6]).unwrap();
                                let lo = u32::from_str_radix(h2, 16).unwrap(); self.i += 6;
                                code = 0x10000 + ((code - 0xD800) << 10) + (lo - 0xDC00);
                            }
                            let ch = std::char::from_u32(code).unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                Json::Str(String::from_utf8(out).unwrap())
            } else if c == b't' { self.i += 4; Json::Bool(true) }
            else if c == b'f' { self.i += 5; Json::Bool(false) }
            else if c == b'n' { self.i += 4; Json::Null }
            else {
                let st = self.i;
                while self.i < self.s.len() && (b"+-.eE".contains(&self.s[self.i]) || self.s[self.i].is_ascii_digit()) { self.i += 1; }
                Json::Num(std::str::from_utf8(&self.s[st..self.i]).unwrap().to_string())
            }
        }
    }

    pub trait FromJson: Sized { fn from_json(v: &Json) -> Self; }
    macro_rules! ints { ($($t:ty),*) => { $(impl FromJson for $t {
        fn from_json(v: &Json) -> Self { match v {
            Json::Num(s) => s.parse::<$t>().unwrap_or_else(|_| s.parse::<f64>().unwrap() as $t),
            Json::Bool(b) => *b as $t,
            _ => panic!("harness: expected a number") } } })* } }
    ints!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
    impl FromJson for f64 { fn from_json(v: &Json) -> Self { match v { Json::Num(s) => s.parse().unwrap(), _ => panic!("harness: expected a number") } } }
    impl FromJson for f32 { fn from_json(v: &Json) -> Self { f64::from_json(v) as f32 } }
    impl FromJson for bool { fn from_json(v: &Json) -> Self { match v { Json::Bool(b) => *b, Json::Num(s) => s != "0", _ => panic!("harness: expected a bool") } } }
    impl FromJson for String { fn from_json(v: &Json) -> Self { match v { Json::Str(s) => s.clone(), _ => panic!("harness: expected a string") } } }
    impl FromJson for char { fn from_json(v: &Json) -> Self { match v { Json::Str(s) => s.chars().next().unwrap(), _ => panic!("harness: expected a char") } } }
    impl<T: FromJson> FromJson for Vec<T> { fn from_json(v: &Json) -> Self { match v { Json::Arr(a) => a.iter().map(T::from_json).collect(), _ => panic!("harness: expected a list") } } }
    impl<T: FromJson> FromJson for Option<T> { fn from_json(v: &Json) -> Self { match v { Json::Null => None, x => Some(T::from_json(x)) } } }

    pub trait ToJson { fn to_json(&self, out: &mut String); }
    macro_rules! nums { ($($t:ty),*) => { $(impl ToJson for $t { fn to_json(&self, out: &mut String) { out.push_str(&self.to_string()); } })* } }
    nums!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
    impl ToJson for f64 { fn to_json(&self, out: &mut String) { if self.is_finite() { out.push_str(&format!("{:?}", self)); } else if self.is_nan() { out.push_str("NaN"); } else if *self > 0.0 { out.push_str("Infinity"); } else { out.push_str("-Infinity"); } } }
    impl ToJson for f32 { fn to_json(&self, out: &mut String) { (*self as f64).to_json(out) } }
    impl ToJson for bool { fn to_json(&self, out: &mut String) { out.push_str(if *self { "true" } else { "false" }); } }
    impl ToJson for () { fn to_json(&self, out: &mut String) { out.push_str("null"); } }
    impl ToJson for str {
        fn to_json(&self, out: &mut String) {
            out.push('"');
            for ch in self.chars() {
                match ch {
                    '"' => out.push_str("\\\""), '\\' => out.push_str("\\\\"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
    }
    impl ToJson for String { fn to_json(&self, out: &mut String) { self.as_str().to_json(out) } }
    impl ToJson for char { fn to_json(&self, out: &mut String) { self.to_string().to_json(out) } }
    impl<T: ToJson> ToJson for Vec<T> { fn to_json(&self, out: &mut String) { self.as_slice().to_json(out) } }
    impl<T: ToJson> ToJson for [T] {
        fn to_json(&self, out: &mut String) {
            out.push('[');
            for (k, x) in self.iter().enumerate() { if k > 0 { out.push_str(", "); } x.to_json(out); }
            out.push(']');
        }
    }
    impl<T: ToJson> ToJson for Option<T> { fn to_json(&self, out: &mut String) { match self { Some(x) => x.to_json(out), None => out.push_str("null") } } }
    impl<A: ToJson, B: ToJson> ToJson for (A, B) { fn to_json(&self, out: &mut String) { out.push('['); self.0.to_json(out); out.push_str(", "); self.1.to_json(out); out.push(']'); } }
}
"""


def _owned_type(typ: str) -> tuple[str, str]:
    """(the owned type to parse, how to pass it) for a parameter type."""
    t = typ.strip()
    if t.startswith("&mut "):
        inner = t[5:].strip()
        return (_owned(inner), "&mut ")
    if t.startswith("&"):
        inner = re.sub(r"^&('\w+\s+)?", "", t).strip()
        return (_owned(inner), "&")
    return (t, "")


def _owned(t: str) -> str:
    if t == "str":
        return "String"
    m = re.fullmatch(r"\[(.+)\]", t)
    if m:
        return f"Vec<{m.group(1)}>"
    return t


def serve_main(fn: RustFn, stack_mb: int = 512) -> str:
    """A ``fn main`` that answers calls of ``fn`` given as JSON argument lists, one
    per stdin line, on a thread with a ``stack_mb`` stack (as the Python judge)."""
    lets: list[str] = []
    args: list[str] = []
    for k, (_pname, ptype) in enumerate(fn.params):
        owned, how = _owned_type(ptype)
        mut = "mut " if how == "&mut " else ""
        lets.append(f"            let {mut}a{k}: {owned} = __rb::FromJson::from_json(&v[{k}]);")
        args.append(f"{how}a{k}")
    n = len(fn.params)
    body = "\n".join(lets)
    return f"""{_SERVE_SUPPORT}
fn main() {{
    let worker = std::thread::Builder::new().stack_size({stack_mb} << 20).spawn(|| {{
        use std::io::{{BufRead, Write}};
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {{
            let line = line.unwrap();
            if line.trim().is_empty() {{ continue; }}
            let v = match __rb::P::new(&line).value() {{ __rb::Json::Arr(a) => a, _ => panic!("harness: expected an argument list") }};
            if v.len() != {n} {{ panic!("harness: {fn.name} takes {n} argument(s), got {{}}", v.len()); }}
{body}
            let r = {fn.name}({", ".join(args)});
            let mut s = String::from("\\x1eRB ");
            __rb::ToJson::to_json(&r, &mut s);
            s.push('\\n');
            let out = std::io::stdout();
            let mut lock = out.lock();
            lock.write_all(s.as_bytes()).unwrap();
            lock.flush().unwrap();
        }}
    }}).unwrap();
    if worker.join().is_err() {{ std::process::exit(101); }}
}}
"""
