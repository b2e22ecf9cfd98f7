"""Rust solutions written for this project's tests (not taken from any dataset).

``GOOD`` pass their problem's hidden tests; ``BROKEN`` fail them in a known way:
a compile error, a wrong answer (failing ``assert_eq!``), a loop that never ends,
an allocation without bound.
"""

from __future__ import annotations

# HumanEval-rs (MultiPL-E names): complete functions, as a model would answer.
GOOD: dict[str, str] = {
    "HumanEval_24_largest_divisor": """
fn largest_divisor(n: isize) -> isize {
    (1..n).rev().find(|d| n % d == 0).unwrap_or(1)
}
""",
    "HumanEval_47_median": """
fn median(l: Vec<isize>) -> f64 {
    let mut v = l.clone();
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    }
}
""",
    "HumanEval_35_max_element": """
fn max_element(l: Vec<isize>) -> isize {
    *l.iter().max().unwrap()
}
""",
    "HumanEval_135_can_arrange": """
fn can_arrange(arr: Vec<isize>) -> isize {
    let mut ans = -1;
    for i in 1..arr.len() {
        if arr[i] < arr[i - 1] {
            ans = i as isize;
        }
    }
    ans
}
""",
    "HumanEval_41_car_race_collision": """
fn car_race_collision(n: isize) -> isize {
    n * n
}
""",
    # A body only (MultiPL-E completion style): the signature comes from the prompt.
    "HumanEval_160_do_algebra": """    let mut nums: Vec<isize> = operand.clone();
    let mut ops: Vec<String> = operator.clone();
    // ** first (right-assoc), then * and //, then + and -.
    let mut i = ops.len();
    while i > 0 {
        i -= 1;
        if ops[i] == "**" {
            let v = nums[i].pow(nums[i + 1] as u32);
            nums[i] = v;
            nums.remove(i + 1);
            ops.remove(i);
        }
    }
    let mut i = 0;
    while i < ops.len() {
        if ops[i] == "*" || ops[i] == "//" {
            let v = if ops[i] == "*" { nums[i] * nums[i + 1] } else { nums[i].div_euclid(nums[i + 1]) };
            nums[i] = v;
            nums.remove(i + 1);
            ops.remove(i);
        } else {
            i += 1;
        }
    }
    let mut acc = nums[0];
    for (k, op) in ops.iter().enumerate() {
        if op == "+" { acc += nums[k + 1]; } else { acc -= nums[k + 1]; }
    }
    acc
}
""",
}

BROKEN: dict[str, tuple[str, str]] = {
    # name -> (problem, source)
    "compile_error": (
        "HumanEval_24_largest_divisor",
        """
fn largest_divisor(n: isize) -> isize {
    let d: usize = n;
    d
}
""",
    ),
    "wrong_answer": (
        "HumanEval_35_max_element",
        """
fn max_element(l: Vec<isize>) -> isize {
    *l.iter().min().unwrap()
}
""",
    ),
    "infinite_loop": (
        "HumanEval_41_car_race_collision",
        """
fn car_race_collision(n: isize) -> isize {
    let mut x: u64 = 1;
    while x != 0 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(n as u64) | 1;
    }
    n * n
}
""",
    ),
    "unbounded_allocation": (
        "HumanEval_41_car_race_collision",
        """
fn car_race_collision(n: isize) -> isize {
    let mut keep: Vec<Vec<u8>> = Vec::new();
    loop {
        keep.push(vec![1u8; 64 << 20]);
        if keep.len() == usize::MAX { break; }
    }
    n * n + keep.len() as isize
}
""",
    ),
}

# LeetcodeHard-rs: judged by the Python hidden checks through the JSON call bridge.
LEETCODE_GOOD: dict[str, str] = {
    "check-if-point-is-reachable": """
fn is_reachable(target_x: i32, target_y: i32) -> bool {
    fn gcd(a: i64, b: i64) -> i64 { if b == 0 { a } else { gcd(b, a % b) } }
    let g = gcd(target_x as i64, target_y as i64);
    g & (g - 1) == 0
}
""",
    "cycle-length-queries-in-a-tree": """
fn cycle_length_queries(n: i32, queries: Vec<Vec<i32>>) -> Vec<i32> {
    let _ = n;
    queries
        .iter()
        .map(|q| {
            let (mut a, mut b, mut steps) = (q[0], q[1], 1);
            while a != b {
                if a > b { a /= 2 } else { b /= 2 }
                steps += 1;
            }
            steps
        })
        .collect()
}
""",
    "split-message-based-on-limit": """
fn split_message(message: String, limit: i32) -> Vec<String> {
    let chars: Vec<char> = message.chars().collect();
    let n = chars.len() as i64;
    let limit = limit as i64;
    let mut digits: i64 = 0;
    for k in 1..=n {
        let len_k = k.to_string().len() as i64;
        digits += len_k;
        if limit * k - (digits + len_k * k + 3 * k) >= n {
            let mut out = Vec::new();
            let mut i: usize = 0;
            for j in 1..=k {
                let tail = format!("<{}/{}>", j, k);
                let take = (limit as usize).saturating_sub(tail.len());
                let end = (i + take).min(chars.len());
                let mut part: String = chars[i..end].iter().collect();
                part.push_str(&tail);
                out.push(part);
                i = end;
            }
            return out;
        }
    }
    Vec::new()
}
""",
    # Recursive DFS over trees of 1e5 nodes (path-shaped in some stress cases).
    "count-number-of-possible-root-nodes": """
use std::collections::HashSet;

fn root_count(edges: Vec<Vec<i32>>, guesses: Vec<Vec<i32>>, k: i32) -> i32 {
    let n = edges.len() + 1;
    let mut g = vec![Vec::new(); n];
    for e in &edges {
        g[e[0] as usize].push(e[1] as usize);
        g[e[1] as usize].push(e[0] as usize);
    }
    let gs: HashSet<(usize, usize)> = guesses.iter().map(|x| (x[0] as usize, x[1] as usize)).collect();
    fn count(u: usize, p: usize, g: &Vec<Vec<usize>>, gs: &HashSet<(usize, usize)>) -> i32 {
        let mut c = 0;
        for &v in &g[u] {
            if v != p {
                c += gs.contains(&(u, v)) as i32 + count(v, u, g, gs);
            }
        }
        c
    }
    fn reroot(u: usize, p: usize, c: i32, k: i32, g: &Vec<Vec<usize>>, gs: &HashSet<(usize, usize)>) -> i32 {
        let mut ans = (c >= k) as i32;
        for &v in &g[u] {
            if v != p {
                let c2 = c - gs.contains(&(u, v)) as i32 + gs.contains(&(v, u)) as i32;
                ans += reroot(v, u, c2, k, g, gs);
            }
        }
        ans
    }
    let c0 = count(0, usize::MAX, &g, &gs);
    reroot(0, usize::MAX, c0, k, &g, &gs)
}
""",
}

LEETCODE_WRONG: dict[str, str] = {
    "check-if-point-is-reachable": """
fn is_reachable(target_x: i32, target_y: i32) -> bool {
    target_x % 2 == 0 || target_y % 2 == 0
}
""",
    # Panics (index out of bounds) on the first query with a node deeper than 2.
    "cycle-length-queries-in-a-tree": """
fn cycle_length_queries(n: i32, queries: Vec<Vec<i32>>) -> Vec<i32> {
    let table = vec![1, 2, 2];
    queries.iter().map(|q| table[(q[0] + q[1] + n) as usize]).collect()
}
""",
}
