"""The python-bugfix task pool: 64 small buggy functions in 16 bug families, with hidden tests.

Each :class:`BugSpec` holds a reference fix and the bug as one textual replacement inside it
(``buggy = fixed`` with ``old`` replaced by ``new``, exactly once), the failing example shown in the
prompt and at least four hidden tests.  A test is ``(call, expected)``: ``call`` is a Python expression
over the function (several calls in one expression share state, which is how the mutable-default
family is tested; ``(f(d := [3, 1]), d)`` checks that the input is left alone), ``expected`` is a Python
literal.  The expected values are written by hand, never computed from the reference fix:
``tests/test_pybugfix_tasks.py`` proves every fix passes all its hidden tests and every buggy version
fails at least one.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A hidden test: ``(call expression, expected value as a Python literal)``.
Case = tuple[str, str]


@dataclass(frozen=True)
class BugSpec:
    """One task's ground truth.

    Attributes:
        family: the bug family (``Task.group``: splits keep a family together).
        name: the function's name.
        fixed: the reference fix (source of one function, ending in a newline).
        old, new: the bug, as the text ``old`` of ``fixed`` replaced by ``new``.
        shown: the failing example of the prompt: ``(call, expected literal, what the buggy code does)``.
        hidden: the hidden tests (at least 4), some of them edge cases the prompt does not show.
    """

    family: str
    name: str
    fixed: str
    old: str
    new: str
    shown: tuple[str, str, str]
    hidden: tuple[Case, ...]

    @property
    def buggy(self) -> str:
        """The buggy source: ``fixed`` with ``old`` replaced by ``new``.

        Raises:
            ValueError: when ``old`` does not occur exactly once in ``fixed``.
        """
        if self.fixed.count(self.old) != 1:
            raise ValueError(f"{self.family}/{self.name}: the bug text {self.old!r} must occur exactly once")
        return self.fixed.replace(self.old, self.new)

    @property
    def task_id(self) -> str:
        """``"<family>/<name>"``."""
        return f"{self.family}/{self.name}"


def _spec(family: str, name: str, fixed: str, bug: tuple[str, str], shown: tuple[str, str, str],
          *hidden: Case) -> BugSpec:
    return BugSpec(family, name, fixed.lstrip("\n"), bug[0], bug[1], shown, tuple(hidden))


SPECS: tuple[BugSpec, ...] = (
    # ---------------------------------------------------------------------------------- off_by_one
    _spec("off_by_one", "sum_first", """
def sum_first(xs, n):
    total = 0
    for i in range(n):
        total += xs[i]
    return total
""", ("range(n)", "range(n - 1)"), ("sum_first([1, 2, 3], 2)", "3", "1"),
        ("sum_first([5], 1)", "5"), ("sum_first([1, 2, 3], 3)", "6"), ("sum_first([], 0)", "0"),
        ("sum_first([4, -1, 7, 2], 3)", "10")),
    _spec("off_by_one", "count_down", """
def count_down(n):
    return list(range(n, 0, -1))
""", ("range(n, 0, -1)", "range(n, 1, -1)"), ("count_down(3)", "[3, 2, 1]", "[3, 2]"),
        ("count_down(1)", "[1]"), ("count_down(0)", "[]"), ("count_down(5)", "[5, 4, 3, 2, 1]"),
        ("count_down(2)", "[2, 1]")),
    _spec("off_by_one", "last_n", """
def last_n(xs, n):
    if n <= 0:
        return []
    return xs[len(xs) - n:]
""", ("len(xs) - n:", "len(xs) - n + 1:"), ("last_n([1, 2, 3, 4], 2)", "[3, 4]", "[4]"),
        ("last_n([1, 2, 3], 3)", "[1, 2, 3]"), ("last_n([1, 2, 3], 0)", "[]"), ("last_n([7], 1)", "[7]"),
        ("last_n([1, 2, 3, 4, 5], 1)", "[5]")),
    _spec("off_by_one", "pairs", """
def pairs(xs):
    return [(xs[i], xs[i + 1]) for i in range(len(xs) - 1)]
""", ("range(len(xs) - 1)", "range(len(xs) - 2)"), ("pairs([1, 2, 3])", "[(1, 2), (2, 3)]", "[(1, 2)]"),
        ("pairs([])", "[]"), ("pairs([1])", "[]"), ("pairs([1, 2])", "[(1, 2)]"),
        ("pairs(['a', 'b', 'c', 'd'])", "[('a', 'b'), ('b', 'c'), ('c', 'd')]")),
    # ---------------------------------------------------------------------------- wrong_comparison
    _spec("wrong_comparison", "is_adult", """
def is_adult(age):
    return age >= 18
""", (">= 18", "> 18"), ("is_adult(18)", "True", "False"),
        ("is_adult(17)", "False"), ("is_adult(100)", "True"), ("is_adult(0)", "False"), ("is_adult(18)", "True")),
    _spec("wrong_comparison", "clamp", """
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
""", ("if x > hi:", "if x < hi:"), ("clamp(5, 0, 10)", "5", "10"),
        ("clamp(-3, 0, 10)", "0"), ("clamp(15, 0, 10)", "10"), ("clamp(10, 0, 10)", "10"), ("clamp(7, 0, 10)", "7")),
    _spec("wrong_comparison", "count_above", """
def count_above(xs, t):
    return sum(1 for x in xs if x > t)
""", ("x > t", "x >= t"), ("count_above([1, 2, 3], 2)", "1", "2"),
        ("count_above([], 0)", "0"), ("count_above([5, 5, 5], 5)", "0"), ("count_above([1, 9, 4], 3)", "2"),
        ("count_above([-1, -2], -3)", "2")),
    _spec("wrong_comparison", "find_max", """
def find_max(xs):
    best = xs[0]
    for x in xs[1:]:
        if x > best:
            best = x
    return best
""", ("if x > best:", "if x < best:"), ("find_max([3, 7, 5])", "7", "3"),
        ("find_max([1])", "1"), ("find_max([-5, -2, -9])", "-2"), ("find_max([2, 2, 2])", "2"),
        ("find_max([1, 2, 3, 4])", "4")),
    # --------------------------------------------------------------------------- missing_edge_case
    _spec("missing_edge_case", "safe_div", """
def safe_div(a, b):
    if b == 0:
        return None
    return a / b
""", ("    if b == 0:\n        return None\n", ""), ("safe_div(1, 0)", "None", "raises ZeroDivisionError"),
        ("safe_div(6, 3)", "2.0"), ("safe_div(0, 0)", "None"), ("safe_div(-3, 2)", "-1.5"), ("safe_div(5, 0)", "None")),
    _spec("missing_edge_case", "first_word", """
def first_word(s):
    words = s.split()
    if not words:
        return ""
    return words[0]
""", ('    if not words:\n        return ""\n', ""), ('first_word("")', "''", "raises IndexError"),
        ('first_word("hello world")', "'hello'"), ('first_word("   ")', "''"), ('first_word("  one")', "'one'"),
        ('first_word("a b c")', "'a'")),
    _spec("missing_edge_case", "is_power_of_two", """
def is_power_of_two(n):
    if n <= 0:
        return False
    return n & (n - 1) == 0
""", ("    if n <= 0:\n        return False\n", ""), ("is_power_of_two(0)", "False", "True"),
        ("is_power_of_two(1)", "True"), ("is_power_of_two(8)", "True"), ("is_power_of_two(6)", "False"),
        ("is_power_of_two(0)", "False")),
    _spec("missing_edge_case", "title_case", """
def title_case(s):
    return " ".join(w[:1].upper() + w[1:] for w in s.split(" "))
""", ("w[:1].upper()", "w[0].upper()"), ('title_case("a  b")', "'A  B'", "raises IndexError"),
        ('title_case("hello world")', "'Hello World'"), ('title_case("")', "''"), ('title_case("x")', "'X'"),
        ('title_case("one two  three")', "'One Two  Three'")),
    # ----------------------------------------------------------------------------- mutable_default
    _spec("mutable_default", "add_item", """
def add_item(item, items=None):
    if items is None:
        items = []
    items.append(item)
    return items
""", ("items=None):\n    if items is None:\n        items = []\n", "items=[]):\n"),
        ("[add_item(1), add_item(2)][-1]", "[2]", "[1, 2]"),
        ("add_item(5)", "[5]"), ("add_item(3, [1, 2])", "[1, 2, 3]"), ("[add_item('a'), add_item('b')][-1]", "['b']"),
        ("len([add_item(i) for i in range(3)][-1])", "1")),
    _spec("mutable_default", "count_words", """
def count_words(text, counts=None):
    if counts is None:
        counts = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    return counts
""", ("counts=None):\n    if counts is None:\n        counts = {}\n", "counts={}):\n"),
        ('[count_words("a"), count_words("a b")][-1]', "{'a': 1, 'b': 1}", "{'a': 2, 'b': 1}"),
        ('count_words("x x")', "{'x': 2}"), ('count_words("")', "{}"),
        ('[count_words("q"), count_words("q")][-1]', "{'q': 1}"), ('count_words("a", {"a": 1})', "{'a': 2}")),
    _spec("mutable_default", "tag", """
def tag(word, tags=None):
    if tags is None:
        tags = set()
    tags.add(word)
    return sorted(tags)
""", ("tags=None):\n    if tags is None:\n        tags = set()\n", "tags=set()):\n"),
        ("[tag('a'), tag('b')][-1]", "['b']", "['a', 'b']"),
        ("tag('z')", "['z']"), ("tag('b', {'a'})", "['a', 'b']"), ("[tag('x'), tag('x'), tag('y')][-1]", "['y']"),
        ("[tag('m', set()), tag('n')][-1]", "['n']")),
    _spec("mutable_default", "record", """
def record(event, log=None):
    if log is None:
        log = []
    log.append(event)
    return len(log)
""", ("log=None):\n    if log is None:\n        log = []\n", "log=[]):\n"),
        ("[record('a'), record('b')][-1]", "1", "2"),
        ("record('x')", "1"), ("record('y', ['a'])", "2"), ("[record(1), record(2), record(3)][-1]", "1"),
        ("[record('k', []), record('k')][-1]", "1")),
    # ------------------------------------------------------------------------------ int_division
    _spec("int_division", "average", """
def average(xs):
    return sum(xs) / len(xs)
""", ("/ len", "// len"), ("average([1, 2])", "1.5", "1"),
        ("average([1, 2, 3, 4])", "2.5"), ("average([5])", "5.0"), ("average([-1, 0])", "-0.5"),
        ("average([1, 1, 2])", "1.3333333333333333")),
    _spec("int_division", "half", """
def half(n):
    return n / 2
""", ("n / 2", "n // 2"), ("half(5)", "2.5", "2"),
        ("half(4)", "2.0"), ("half(-3)", "-1.5"), ("half(0)", "0.0"), ("half(1)", "0.5")),
    _spec("int_division", "percent", """
def percent(part, whole):
    return 100 * part / whole
""", ("100 * part / whole", "100 * (part // whole)"), ("percent(1, 4)", "25.0", "0"),
        ("percent(1, 2)", "50.0"), ("percent(3, 3)", "100.0"), ("percent(1, 3)", "33.333333333333336"),
        ("percent(0, 5)", "0.0"), ("percent(5, 2)", "250.0")),
    _spec("int_division", "midpoint", """
def midpoint(a, b):
    return (a + b) / 2
""", ("(a + b) / 2", "(a + b) // 2"), ("midpoint(1, 2)", "1.5", "1"),
        ("midpoint(0, 0)", "0.0"), ("midpoint(-1, 0)", "-0.5"), ("midpoint(2, 4)", "3.0"),
        ("midpoint(1.0, 2.0)", "1.5")),
    # ------------------------------------------------------------------------------- empty_input
    _spec("empty_input", "largest", """
def largest(xs):
    if not xs:
        return None
    return max(xs)
""", ("return None", "return 0"), ("largest([])", "None", "0"),
        ("largest([3, 1])", "3"), ("largest([-2, -7])", "-2"), ("largest([])", "None"), ("largest([0])", "0")),
    _spec("empty_input", "initials", """
def initials(names):
    if not names:
        return ""
    return "".join(n[0] for n in names)
""", ('return ""\n', "return None\n"), ("initials([])", "''", "None"),
        ("initials(['Ada', 'Bob'])", "'AB'"), ("initials([])", "''"), ("initials(['x'])", "'x'"),
        ("initials(['Zed', 'amy', 'Kim'])", "'ZaK'")),
    _spec("empty_input", "min_length", """
def min_length(words):
    if not words:
        return 0
    return min(len(w) for w in words)
""", ("return 0\n", "return -1\n"), ("min_length([])", "0", "-1"),
        ("min_length(['abc', 'de'])", "2"), ("min_length([])", "0"), ("min_length(['', 'x'])", "0"),
        ("min_length(['hello'])", "5")),
    _spec("empty_input", "mean_length", """
def mean_length(words):
    if not words:
        return 0.0
    return sum(len(w) for w in words) / len(words)
""", ("return 0.0", "return None"), ("mean_length([])", "0.0", "None"),
        ("mean_length(['ab', 'abcd'])", "3.0"), ("mean_length([])", "0.0"), ("mean_length(['x'])", "1.0"),
        ("mean_length(['', 'abc'])", "1.5")),
    # -------------------------------------------------------------------------- accumulator_init
    _spec("accumulator_init", "product_all", """
def product_all(xs):
    result = 1
    for x in xs:
        result *= x
    return result
""", ("result = 1", "result = 0"), ("product_all([2, 3])", "6", "0"),
        ("product_all([])", "1"), ("product_all([7])", "7"), ("product_all([-2, 5])", "-10"),
        ("product_all([1, 2, 3, 4])", "24")),
    _spec("accumulator_init", "concat", """
def concat(parts):
    out = ""
    for p in parts:
        out += p
    return out
""", ('out = ""', 'out = " "'), ("concat(['a', 'b'])", "'ab'", "' ab'"),
        ("concat([])", "''"), ("concat(['x'])", "'x'"), ("concat(['ab', '', 'c'])", "'abc'"),
        ("concat(['1', '2', '3'])", "'123'")),
    _spec("accumulator_init", "running_max", """
def running_max(xs):
    out = []
    best = float("-inf")
    for x in xs:
        best = max(best, x)
        out.append(best)
    return out
""", ('best = float("-inf")', "best = 0"), ("running_max([-3, -1, -2])", "[-3, -1, -1]", "[0, 0, 0]"),
        ("running_max([])", "[]"), ("running_max([1, 3, 2])", "[1, 3, 3]"), ("running_max([-5])", "[-5]"),
        ("running_max([-2, -4])", "[-2, -2]")),
    _spec("accumulator_init", "count_evens", """
def count_evens(xs):
    count = 0
    for x in xs:
        if x % 2 == 0:
            count += 1
    return count
""", ("count = 0", "count = 1"), ("count_evens([1, 2])", "1", "2"),
        ("count_evens([])", "0"), ("count_evens([1, 3])", "0"), ("count_evens([2, 4, 6])", "3"),
        ("count_evens([0, -2, 7])", "2")),
    # ------------------------------------------------------------------------- shadowed_variable
    _spec("shadowed_variable", "total_price", """
def total_price(prices, tax):
    total = 0
    for price in prices:
        total += price
    return total * (1 + tax)
""", ("for price in prices:\n        total += price", "for tax in prices:\n        total += tax"),
        ("total_price([10, 20], 0.5)", "45.0", "630"),
        ("total_price([], 0.1)", "0.0"), ("total_price([100], 0.0)", "100.0"), ("total_price([1, 2, 3], 1.0)", "12.0"),
        ("total_price([5], 0.2)", "6.0")),
    _spec("shadowed_variable", "scale", """
def scale(values, factor):
    result = []
    for value in values:
        result.append(value * factor)
    return result
""", ("result.append(value * factor)", "factor = value * factor\n        result.append(factor)"),
        ("scale([1, 2, 3], 2)", "[2, 4, 6]", "[2, 4, 12]"),
        ("scale([], 3)", "[]"), ("scale([5], 3)", "[15]"), ("scale([1, 1, 1], 2)", "[2, 2, 2]"),
        ("scale([2, -1], -1)", "[-2, 1]")),
    _spec("shadowed_variable", "count_matches", """
def count_matches(words, word):
    count = 0
    for w in words:
        if w == word:
            count += 1
    return count
""", ("for w in words:\n        if w == word:", "for word in words:\n        if word == word:"),
        ("count_matches(['a', 'b', 'a'], 'a')", "2", "3"),
        ("count_matches([], 'x')", "0"), ("count_matches(['x'], 'y')", "0"), ("count_matches(['b', 'b'], 'b')", "2"),
        ("count_matches(['A', 'a'], 'a')", "1")),
    _spec("shadowed_variable", "max_gap", """
def max_gap(xs):
    xs = sorted(xs)
    gap = 0
    for i in range(1, len(xs)):
        gap = max(gap, xs[i] - xs[i - 1])
    return gap
""", ("gap = max(gap, xs[i] - xs[i - 1])", "gap = xs[i] - xs[i - 1]"), ("max_gap([1, 10, 12])", "9", "2"),
        ("max_gap([])", "0"), ("max_gap([5])", "0"), ("max_gap([3, 1, 2])", "1"),
        ("max_gap([0, 100, 101, 103])", "100")),
    # ---------------------------------------------------------------------------- string_slicing
    _spec("string_slicing", "reverse_words", """
def reverse_words(s):
    return " ".join(s.split()[::-1])
""", ("[::-1]", "[:-1]"), ('reverse_words("a b c")', "'c b a'", "'a b'"),
        ('reverse_words("")', "''"), ('reverse_words("one")', "'one'"), ('reverse_words("hi there")', "'there hi'"),
        ('reverse_words("  x  y ")', "'y x'")),
    _spec("string_slicing", "strip_prefix", """
def strip_prefix(s, prefix):
    if s.startswith(prefix):
        return s[len(prefix):]
    return s
""", ("s[len(prefix):]", "s[len(prefix) + 1:]"), ('strip_prefix("unhappy", "un")', "'happy'", "'appy'"),
        ('strip_prefix("abc", "x")', "'abc'"), ('strip_prefix("abc", "abc")', "''"),
        ('strip_prefix("prefix", "")', "'prefix'"), ('strip_prefix("re-do", "re-")', "'do'")),
    _spec("string_slicing", "file_extension", """
def file_extension(name):
    dot = name.rfind(".")
    if dot == -1:
        return ""
    return name[dot + 1:]
""", ("name[dot + 1:]", "name[dot:]"), ('file_extension("a.txt")', "'txt'", "'.txt'"),
        ('file_extension("noext")', "''"), ('file_extension("archive.tar.gz")', "'gz'"), ('file_extension("x.")', "''"),
        ('file_extension(".bashrc")', "'bashrc'")),
    _spec("string_slicing", "is_palindrome", """
def is_palindrome(s):
    t = s.lower()
    return t == t[::-1]
""", ("t[::-1]", "t[::1]"), ('is_palindrome("ab")', "False", "True"),
        ('is_palindrome("")', "True"), ('is_palindrome("Aba")', "True"), ('is_palindrome("abc")', "False"),
        ('is_palindrome("abca")', "False")),
    # ----------------------------------------------------------------------------- boolean_logic
    _spec("boolean_logic", "in_range", """
def in_range(x, lo, hi):
    return lo <= x and x <= hi
""", ("lo <= x and x <= hi", "lo <= x or x <= hi"), ("in_range(15, 0, 10)", "False", "True"),
        ("in_range(5, 0, 10)", "True"), ("in_range(-1, 0, 10)", "False"), ("in_range(0, 0, 10)", "True"),
        ("in_range(11, 0, 10)", "False")),
    _spec("boolean_logic", "is_leap", """
def is_leap(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
""", ("or year % 400", "and year % 400"), ("is_leap(2024)", "True", "False"),
        ("is_leap(1900)", "False"), ("is_leap(2000)", "True"), ("is_leap(2023)", "False"), ("is_leap(1996)", "True")),
    _spec("boolean_logic", "can_vote", """
def can_vote(age, citizen):
    return age >= 18 and citizen
""", ("and citizen", "or citizen"), ("can_vote(10, True)", "False", "True"),
        ("can_vote(30, True)", "True"), ("can_vote(30, False)", "False"), ("can_vote(18, True)", "True"),
        ("can_vote(5, False)", "False")),
    _spec("boolean_logic", "xor", """
def xor(a, b):
    return (a or b) and not (a and b)
""", ("not (a and b)", "not (a or b)"), ("xor(True, False)", "True", "False"),
        ("xor(False, False)", "False"), ("xor(True, True)", "False"), ("xor(False, True)", "True"),
        ("xor(True, False)", "True")),
    # --------------------------------------------------------------------------- recursion_base
    _spec("recursion_base", "factorial", """
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)
""", ("if n <= 1:", "if n == 1:"), ("factorial(0)", "1", "raises RecursionError"),
        ("factorial(1)", "1"), ("factorial(5)", "120"), ("factorial(0)", "1"), ("factorial(3)", "6")),
    _spec("recursion_base", "fib", """
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
""", ("return n\n", "return 1\n"), ("fib(0)", "0", "1"),
        ("fib(1)", "1"), ("fib(2)", "1"), ("fib(7)", "13"), ("fib(10)", "55")),
    _spec("recursion_base", "sum_list", """
def sum_list(xs):
    if not xs:
        return 0
    return xs[0] + sum_list(xs[1:])
""", ("if not xs:\n        return 0", "if len(xs) == 1:\n        return xs[0]"),
        ("sum_list([])", "0", "raises IndexError"),
        ("sum_list([1, 2, 3])", "6"), ("sum_list([])", "0"), ("sum_list([5])", "5"), ("sum_list([-1, 1])", "0")),
    _spec("recursion_base", "power", """
def power(base, exp):
    if exp == 0:
        return 1
    return base * power(base, exp - 1)
""", ("return 1\n", "return base\n"), ("power(2, 3)", "8", "16"),
        ("power(5, 0)", "1"), ("power(3, 1)", "3"), ("power(-2, 3)", "-8"), ("power(10, 2)", "100")),
    # ------------------------------------------------------------------------------ dict_default
    _spec("dict_default", "group_by_length", """
def group_by_length(words):
    groups = {}
    for w in words:
        groups.setdefault(len(w), []).append(w)
    return groups
""", ("groups.setdefault(len(w), []).append(w)", "groups[len(w)] = [w]"),
        ("group_by_length(['a', 'b'])", "{1: ['a', 'b']}", "{1: ['b']}"),
        ("group_by_length([])", "{}"), ("group_by_length(['hi'])", "{2: ['hi']}"),
        ("group_by_length(['ab', 'c', 'de'])", "{2: ['ab', 'de'], 1: ['c']}"),
        ("group_by_length(['x', 'yy', 'z'])", "{1: ['x', 'z'], 2: ['yy']}")),
    _spec("dict_default", "char_counts", """
def char_counts(s):
    counts = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    return counts
""", ("counts.get(c, 0)", "counts.get(c, 1)"), ("char_counts('a')", "{'a': 1}", "{'a': 2}"),
        ("char_counts('')", "{}"), ("char_counts('aab')", "{'a': 2, 'b': 1}"), ("char_counts('zz')", "{'z': 2}"),
        ("char_counts('abc')", "{'a': 1, 'b': 1, 'c': 1}")),
    _spec("dict_default", "lookup", """
def lookup(table, key):
    return table.get(key, "unknown")
""", ('table.get(key, "unknown")', "table[key]"), ("lookup({'a': 'x'}, 'b')", "'unknown'", "raises KeyError"),
        ("lookup({'a': 'x'}, 'a')", "'x'"), ("lookup({}, 'k')", "'unknown'"), ("lookup({1: 'one'}, 1)", "'one'"),
        ("lookup({'a': 'x'}, 'A')", "'unknown'")),
    _spec("dict_default", "word_index", """
def word_index(words):
    index = {}
    for i, w in enumerate(words):
        if w not in index:
            index[w] = i
    return index
""", ("if w not in index:\n            index[w] = i", "index[w] = i"),
        ("word_index(['a', 'b', 'a'])", "{'a': 0, 'b': 1}", "{'a': 2, 'b': 1}"),
        ("word_index([])", "{}"), ("word_index(['x'])", "{'x': 0}"), ("word_index(['q', 'q', 'q'])", "{'q': 0}"),
        ("word_index(['a', 'b', 'c'])", "{'a': 0, 'b': 1, 'c': 2}")),
    # ---------------------------------------------------------------------------------- sort_key
    _spec("sort_key", "sort_by_length", """
def sort_by_length(words):
    return sorted(words, key=len)
""", ("key=len", "key=len, reverse=True"),
        ("sort_by_length(['ccc', 'a', 'bb'])", "['a', 'bb', 'ccc']", "['ccc', 'bb', 'a']"),
        ("sort_by_length([])", "[]"), ("sort_by_length(['x'])", "['x']"),
        ("sort_by_length(['bb', 'a'])", "['a', 'bb']"),
        ("sort_by_length(['aa', 'b', 'cc'])", "['b', 'aa', 'cc']")),
    _spec("sort_key", "top_scores", """
def top_scores(scores, n):
    return sorted(scores, reverse=True)[:n]
""", ("sorted(scores, reverse=True)", "sorted(scores)"), ("top_scores([3, 9, 5], 2)", "[9, 5]", "[3, 5]"),
        ("top_scores([], 3)", "[]"), ("top_scores([1], 1)", "[1]"), ("top_scores([4, 4, 1], 2)", "[4, 4]"),
        ("top_scores([2, 8, 6, 7], 3)", "[8, 7, 6]")),
    _spec("sort_key", "sort_by_age", """
def sort_by_age(people):
    return [name for name, age in sorted(people, key=lambda p: p[1])]
""", ("p: p[1]", "p: p[0]"), ("sort_by_age([('bob', 30), ('amy', 40)])", "['bob', 'amy']", "['amy', 'bob']"),
        ("sort_by_age([])", "[]"), ("sort_by_age([('z', 1)])", "['z']"),
        ("sort_by_age([('a', 3), ('b', 1), ('c', 2)])", "['b', 'c', 'a']"),
        ("sort_by_age([('x', 5), ('y', 5)])", "['x', 'y']")),
    _spec("sort_key", "case_insensitive_sort", """
def case_insensitive_sort(words):
    return sorted(words, key=str.lower)
""", ("sorted(words, key=str.lower)", "sorted(words)"),
        ("case_insensitive_sort(['B', 'a'])", "['a', 'B']", "['B', 'a']"),
        ("case_insensitive_sort([])", "[]"), ("case_insensitive_sort(['b', 'a', 'C'])", "['a', 'b', 'C']"),
        ("case_insensitive_sort(['x'])", "['x']"),
        ("case_insensitive_sort(['Bob', 'alice', 'Carol'])", "['alice', 'Bob', 'Carol']")),
    # ------------------------------------------------------------------------------ early_return
    _spec("early_return", "all_positive", """
def all_positive(xs):
    for x in xs:
        if x <= 0:
            return False
    return True
""", ("            return False\n    return True", "            return False\n        return True"),
        ("all_positive([1, -2])", "False", "True"),
        ("all_positive([])", "True"), ("all_positive([3, 4])", "True"), ("all_positive([5, 6, 0])", "False"),
        ("all_positive([-1])", "False")),
    _spec("early_return", "index_of", """
def index_of(xs, target):
    for i, x in enumerate(xs):
        if x == target:
            return i
    return -1
""", ("            return i\n    return -1", "            return i\n        return -1"),
        ("index_of([4, 5], 5)", "1", "-1"),
        ("index_of([], 1)", "-1"), ("index_of([7], 7)", "0"), ("index_of([1, 2, 3], 3)", "2"),
        ("index_of([1, 2], 9)", "-1")),
    _spec("early_return", "sum_until_negative", """
def sum_until_negative(xs):
    total = 0
    for x in xs:
        if x < 0:
            break
        total += x
    return total
""", ("        total += x\n    return total", "        total += x\n        return total"),
        ("sum_until_negative([1, 2, -1, 5])", "3", "1"),
        ("sum_until_negative([])", "0"), ("sum_until_negative([-1, 5])", "0"), ("sum_until_negative([4])", "4"),
        ("sum_until_negative([1, 1, 1])", "3")),
    _spec("early_return", "has_duplicates", """
def has_duplicates(xs):
    seen = set()
    for x in xs:
        if x in seen:
            return True
        seen.add(x)
    return False
""", ("        seen.add(x)\n    return False", "        seen.add(x)\n        return False"),
        ("has_duplicates([1, 2, 1])", "True", "False"),
        ("has_duplicates([])", "False"), ("has_duplicates([3, 3])", "True"), ("has_duplicates([1, 2, 3])", "False"),
        ("has_duplicates(['a', 'b', 'a'])", "True")),
    # ---------------------------------------------------------------------------- wrong_operator
    _spec("wrong_operator", "square_all", """
def square_all(xs):
    return [x ** 2 for x in xs]
""", ("x ** 2", "x * 2"), ("square_all([3])", "[9]", "[6]"),
        ("square_all([])", "[]"), ("square_all([2])", "[4]"), ("square_all([-1, 0])", "[1, 0]"),
        ("square_all([1, 2, 3])", "[1, 4, 9]")),
    _spec("wrong_operator", "celsius_to_fahrenheit", """
def celsius_to_fahrenheit(c):
    return c * 9 / 5 + 32
""", ("+ 32", "- 32"), ("celsius_to_fahrenheit(100)", "212.0", "148.0"),
        ("celsius_to_fahrenheit(0)", "32.0"), ("celsius_to_fahrenheit(-40)", "-40.0"),
        ("celsius_to_fahrenheit(37)", "98.6"), ("celsius_to_fahrenheit(10)", "50.0")),
    _spec("wrong_operator", "is_even", """
def is_even(n):
    return n % 2 == 0
""", ("n % 2", "n / 2"), ("is_even(4)", "True", "False"),
        ("is_even(0)", "True"), ("is_even(7)", "False"), ("is_even(-2)", "True"), ("is_even(10)", "True")),
    _spec("wrong_operator", "remaining", """
def remaining(total, used):
    return total - used
""", ("total - used", "used - total"), ("remaining(10, 3)", "7", "-7"),
        ("remaining(5, 5)", "0"), ("remaining(0, 0)", "0"), ("remaining(8, 2)", "6"), ("remaining(3, 4)", "-1")),
    # ---------------------------------------------------------------------------------- aliasing
    _spec("aliasing", "sorted_copy", """
def sorted_copy(xs):
    result = list(xs)
    result.sort()
    return result
""", ("result = list(xs)", "result = xs"),
        ("(sorted_copy(d := [3, 1, 2]), d)", "([1, 2, 3], [3, 1, 2])", "([1, 2, 3], [1, 2, 3])"),
        ("(sorted_copy(d := []), d)", "([], [])"), ("sorted_copy([2, 1])", "[1, 2]"),
        ("(sorted_copy(d := [5, 4]), d)", "([4, 5], [5, 4])"), ("(sorted_copy(d := [1]), d)", "([1], [1])")),
    _spec("aliasing", "append_total", """
def append_total(xs):
    out = xs[:]
    out.append(sum(xs))
    return out
""", ("out = xs[:]", "out = xs"),
        ("(append_total(d := [1, 2]), d)", "([1, 2, 3], [1, 2])", "([1, 2, 3], [1, 2, 3])"),
        ("append_total([])", "[0]"), ("append_total([5])", "[5, 5]"),
        ("(append_total(d := [1, 1]), len(d))", "([1, 1, 2], 2)"), ("(append_total(d := []), d)", "([0], [])")),
    _spec("aliasing", "remove_negatives", """
def remove_negatives(xs):
    return [x for x in xs if x >= 0]
""", ("    return [x for x in xs if x >= 0]\n",
          "    for x in xs:\n        if x < 0:\n            xs.remove(x)\n    return xs\n"),
        ("remove_negatives([-1, -2, 3])", "[3]", "[-2, 3]"),
        ("remove_negatives([])", "[]"), ("remove_negatives([1, 2])", "[1, 2]"),
        ("(remove_negatives(d := [-1, 4]), d)", "([4], [-1, 4])"), ("remove_negatives([-5, -5, -5])", "[]")),
    _spec("aliasing", "double_values", """
def double_values(d):
    return {k: v * 2 for k, v in d.items()}
""", ("    return {k: v * 2 for k, v in d.items()}\n", "    for k in d:\n        d[k] *= 2\n    return d\n"),
        ("(double_values(x := {'a': 1}), x)", "({'a': 2}, {'a': 1})", "({'a': 2}, {'a': 2})"),
        ("double_values({})", "{}"), ("double_values({'b': 3})", "{'b': 6}"),
        ("(double_values(x := {'a': 1, 'b': 2}), x)", "({'a': 2, 'b': 4}, {'a': 1, 'b': 2})"),
        ("double_values({'z': -1.5})", "{'z': -3.0}")),
)

#: Bug families in pool order.
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(spec.family for spec in SPECS))
