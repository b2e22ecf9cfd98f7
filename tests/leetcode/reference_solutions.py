"""Solutions written for this project's tests (not taken from any dataset).

``CORRECT`` solve their LeetcodeHard problem within its limits; some lean on what
LeetCode's Python environment provides without an import (``List``, ``gcd``,
``Counter``, the three-argument builtin ``pow``) or recurse deeper than Python's
default limit, which is exactly what the judge must reproduce. ``WRONG`` give a
wrong answer on some hidden case; ``SLOW`` are correct but too slow for the
near-maximum stress cases.
"""

from __future__ import annotations

CORRECT: dict[str, str] = {
    # gcd comes from the prelude (`from math import *`).
    "check-if-point-is-reachable": """
def isReachable(targetX: int, targetY: int) -> bool:
    g = gcd(targetX, targetY)
    return g & (g - 1) == 0
""",
    "put-marbles-in-bags": """
def putMarbles(weights: List[int], k: int) -> int:
    pairs = sorted(weights[i] + weights[i + 1] for i in range(len(weights) - 1))
    if k == 1:
        return 0
    return sum(pairs[len(pairs) - (k - 1):]) - sum(pairs[: k - 1])
""",
    "count-subarrays-with-fixed-bounds": """
def countSubarrays(nums: List[int], minK: int, maxK: int) -> int:
    ans = 0
    bad = lo = hi = -1
    for i, x in enumerate(nums):
        if x < minK or x > maxK:
            bad = i
        if x == minK:
            lo = i
        if x == maxK:
            hi = i
        ans += max(0, min(lo, hi) - bad)
    return ans
""",
    "cycle-length-queries-in-a-tree": """
def cycleLengthQueries(n: int, queries: List[List[int]]) -> List[int]:
    out = []
    for a, b in queries:
        steps = 1
        while a != b:
            if a > b:
                a //= 2
            else:
                b //= 2
            steps += 1
        out.append(steps)
    return out
""",
    "next-greater-element-iv": """
def secondGreaterElement(nums: List[int]) -> List[int]:
    ans = [-1] * len(nums)
    first, second = [], []  # indices waiting for their 1st / 2nd greater element
    for i, x in enumerate(nums):
        while second and nums[second[-1]] < x:
            ans[second.pop()] = x
        moved = []
        while first and nums[first[-1]] < x:
            moved.append(first.pop())
        second.extend(reversed(moved))
        first.append(i)
    return ans
""",
    # pow(a, b, mod): needs the builtin pow, which `from math import *` shadows.
    "count-anagrams": """
def countAnagrams(s: str) -> int:
    MOD = 10**9 + 7
    fact = [1] * (len(s) + 1)
    for i in range(1, len(s) + 1):
        fact[i] = fact[i - 1] * i % MOD
    ans = 1
    for word in s.split():
        ans = ans * fact[len(word)] % MOD
        for c in Counter(word).values():
            ans = ans * pow(fact[c], MOD - 2, MOD) % MOD
    return ans
""",
    "number-of-great-partitions": """
def countPartitions(nums: List[int], k: int) -> int:
    MOD = 10**9 + 7
    if sum(nums) < 2 * k:
        return 0
    dp = [0] * k
    dp[0] = 1
    for x in nums:
        for s in range(k - 1, x - 1, -1):
            dp[s] = (dp[s] + dp[s - x]) % MOD
    return (pow(2, len(nums), MOD) - 2 * sum(dp)) % MOD
""",
    "minimum-cost-to-make-array-equal": """
def minCost(nums: List[int], cost: List[int]) -> int:
    total = sum(cost)
    acc = 0
    for v, c in sorted(zip(nums, cost)):
        acc += c
        if 2 * acc >= total:
            target = v
            break
    return sum(abs(x - target) * c for x, c in zip(nums, cost))
""",
    "minimum-number-of-operations-to-make-arrays-similar": """
def makeSimilar(nums: List[int], target: List[int]) -> int:
    a = sorted(nums, key=lambda x: (x % 2, x))
    b = sorted(target, key=lambda x: (x % 2, x))
    return sum(abs(x - y) for x, y in zip(a, b)) // 4
""",
    "split-message-based-on-limit": """
def splitMessage(message: str, limit: int) -> List[str]:
    n = len(message)
    digits = 0
    for k in range(1, n + 1):
        digits += len(str(k))
        if limit * k - (digits + len(str(k)) * k + 3 * k) >= n:
            out, i = [], 0
            for j in range(1, k + 1):
                tail = f"<{j}/{k}>"
                out.append(message[i : i + limit - len(tail)] + tail)
                i += limit - len(tail)
            return out
    return []
""",
    # Recursive DFS: on the path-shaped stress trees it recurses ~2e4 deep, far past
    # Python's default recursion limit of 1000.
    "create-components-with-same-value": """
def componentValue(nums: List[int], edges: List[List[int]]) -> int:
    n = len(nums)
    g = [[] for _ in range(n)]
    for a, b in edges:
        g[a].append(b)
        g[b].append(a)
    total, top = sum(nums), max(nums)

    def dfs(u, parent, target):
        s = nums[u]
        for v in g[u]:
            if v != parent:
                r = dfs(v, u, target)
                if r < 0:
                    return -1
                s += r
        if s > target:
            return -1
        return 0 if s == target else s

    for parts in range(min(n, total // top), 1, -1):
        if total % parts == 0 and dfs(0, -1, total // parts) == 0:
            return parts - 1
    return 0
""",
}

WRONG: dict[str, str] = {
    "check-if-point-is-reachable": """
def isReachable(targetX: int, targetY: int) -> bool:
    return gcd(targetX, targetY) == 1
""",
    "put-marbles-in-bags": """
def putMarbles(weights: List[int], k: int) -> int:
    return max(weights) - min(weights)
""",
    # Off by one: counts the subarray that ends before the last bad element.
    "count-subarrays-with-fixed-bounds": """
def countSubarrays(nums: List[int], minK: int, maxK: int) -> int:
    ans = 0
    bad = lo = hi = -1
    for i, x in enumerate(nums):
        if x < minK or x > maxK:
            bad = i
        if x == minK:
            lo = i
        if x == maxK:
            hi = i
        ans += max(0, min(lo, hi) - bad + 1)
    return ans
""",
    "cycle-length-queries-in-a-tree": """
def cycleLengthQueries(n: int, queries: List[List[int]]) -> List[int]:
    return [abs(a - b) + 1 for a, b in queries]
""",
}

SLOW: dict[str, str] = {
    # Quadratic on every input: hopeless on the 1e5-element stress cases.
    "count-subarrays-with-fixed-bounds": """
def countSubarrays(nums: List[int], minK: int, maxK: int) -> int:
    ans = 0
    for i in range(len(nums)):
        lo, hi = 10**9, -1
        for j in range(i, len(nums)):
            lo, hi = min(lo, nums[j]), max(hi, nums[j])
            ans += lo == minK and hi == maxK
    return ans
""",
}

DEEP_RECURSION: dict[str, str] = {
    # Recursive rerooting DFS; some stress trees are paths of 1e5 nodes, and the
    # generator expression in `count` adds C stack per level.
    "count-number-of-possible-root-nodes": """
def rootCount(edges: List[List[int]], guesses: List[List[int]], k: int) -> int:
    n = len(edges) + 1
    g = [[] for _ in range(n)]
    for a, b in edges:
        g[a].append(b)
        g[b].append(a)
    gs = set(map(tuple, guesses))

    def count(u, p):
        return sum(((u, v) in gs) + count(v, u) for v in g[u] if v != p)

    ans = 0

    def reroot(u, p, c):
        nonlocal ans
        ans += c >= k
        for v in g[u]:
            if v != p:
                reroot(v, u, c - ((u, v) in gs) + ((v, u) in gs))

    reroot(0, -1, count(0, -1))
    return ans
""",
}
