// The loopback model's script (tests/pi/record/loopback-model.mjs): the scenarios' knobs and the
// agent's tasks, with the project files they write. Data only: the model reads it.

// --------------------------------------------------------------------------------------------
// Scenarios: per-scenario knobs of the summarizer.
// --------------------------------------------------------------------------------------------

export const SCENARIOS = {
  "print-autocompact": { dropConstraintAtHistorySummary: 3, dropPattern: /legacy\.py/ },
};

// --------------------------------------------------------------------------------------------
// The agent script. Each task: `match` (tested against the last real user message) and
// `steps`; a step is { calls: [[toolName, args], ...] } or { text }.
// --------------------------------------------------------------------------------------------

const UNITTEST = "python3 -m unittest discover -s tests -v";
const LOAD_ALL =
  "python3 -c \"from ledger.csv_import import load_transactions; txs = load_transactions('data/transactions.csv'); print(len(txs), 'transactions, balance', sum(t.amount_cents for t in txs)); [print(t.day, t.amount_cents, t.category, t.payee, sep=' | ') for t in txs]\"";

const CSV_IMPORT_V1 = `"""Load bank CSV exports (date,payee,amount,category) into Transactions."""
from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

from ledger.core import Transaction, parse_amount


def load_transactions(path: str | Path) -> list[Transaction]:
    """Read a CSV export; amounts become integer cents via parse_amount."""
    transactions: list[Transaction] = []
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            transactions.append(
                Transaction(
                    day=date.fromisoformat(row["date"]),
                    payee=row["payee"].strip(),
                    amount_cents=parse_amount(row["amount"]),
                    category=(row.get("category") or "uncategorized").strip(),
                )
            )
    return transactions
`;

const NORMALIZE_FN = `def _normalize_amount(text: str) -> str:
    """Bank exports write refunds as (12.50); parse_amount wants -12.50."""
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        return "-" + text[1:-1]
    return text


def load_transactions(`;

const PARSE_AMOUNT_OLD = `def parse_amount(text: str) -> int:
    """Parse '12.50', '-3', '1,204.99' into integer cents."""
    cleaned = text.strip().replace(",", "")
    negative = cleaned.startswith("-")
    if negative:
        cleaned = cleaned[1:]
    units, _, frac = cleaned.partition(".")
    frac = (frac + "00")[:2]
    cents = int(units or "0") * 100 + int(frac)
    return -cents if negative else cents`;

const PARSE_AMOUNT_NEW = `def parse_amount(text: str) -> int:
    """Parse '12.50', '-3', '1,204.99', '(12.50)' into integer cents, rounding half up."""
    cleaned = text.strip().replace(",", "")
    negative = False
    if cleaned.startswith("(") and cleaned.endswith(")"):
        negative, cleaned = True, cleaned[1:-1]
    if cleaned.startswith("-"):
        negative, cleaned = not negative, cleaned[1:]
    cents = int((Decimal(cleaned) * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))
    return -cents if negative else cents`;

const PARSE_AMOUNT_FLOAT = `def parse_amount(text: str) -> float:
    """Parse '12.50', '-3', '1,204.99' into float dollars (experiment)."""
    cleaned = text.strip().replace(",", "")
    negative = cleaned.startswith("-")
    if negative:
        cleaned = cleaned[1:]
    dollars = float(cleaned)
    return -dollars if negative else dollars`;

const CORE_IMPORT_OLD = "from dataclasses import dataclass, field\n";
const CORE_IMPORT_NEW = "from dataclasses import dataclass, field\nfrom decimal import ROUND_HALF_UP, Decimal\n";

const TEST_CSV_IMPORT = `import unittest
from pathlib import Path

from ledger.csv_import import load_transactions

DATA = Path(__file__).resolve().parent.parent / "data" / "transactions.csv"


class LoadTransactionsTests(unittest.TestCase):
    def test_loads_every_row(self):
        self.assertEqual(len(load_transactions(DATA)), 240)

    def test_refunds_are_negative(self):
        refunds = [t for t in load_transactions(DATA) if t.category == "refund"]
        self.assertTrue(refunds)
        self.assertTrue(all(t.amount_cents < 0 for t in refunds))

    def test_amounts_are_integer_cents(self):
        self.assertTrue(all(isinstance(t.amount_cents, int) for t in load_transactions(DATA)))


if __name__ == "__main__":
    unittest.main()
`;

const REPORT_V1 = `"""Monthly report: python3 -m ledger.report data/transactions.csv"""
from __future__ import annotations

import sys
from collections import defaultdict

from ledger.core import format_cents
from ledger.csv_import import load_transactions


def monthly_totals(transactions):
    months = defaultdict(lambda: defaultdict(int))
    for tx in transactions:
        months[tx.day.strftime("%Y-%m")][tx.category] += tx.amount_cents
    return months


def render(months) -> str:
    lines = []
    for month, categories in months.items():
        lines.append(f"{month}  total {format_cents(sum(categories.values())):>10}")
        for category, cents in categories.items():
            lines.append(f"  {category:<14}{format_cents(cents):>10}")
    return "\\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python3 -m ledger.report FILE.csv", file=sys.stderr)
        return 2
    print(render(monthly_totals(load_transactions(argv[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
`;

const TEST_REPORT = `import unittest
from datetime import date

from ledger.core import Transaction
from ledger.report import monthly_totals, render


class ReportTests(unittest.TestCase):
    def test_months_sorted_and_totalled(self):
        txs = [
            Transaction(date(2024, 2, 1), "Corner Bakery", -450, "food"),
            Transaction(date(2024, 1, 5), "Acme Payroll", 250000, "income"),
            Transaction(date(2024, 1, 9), "Corner Bakery", -300, "food"),
        ]
        text = render(monthly_totals(txs))
        self.assertLess(text.index("2024-01"), text.index("2024-02"))
        self.assertIn("2024-01  total    2497.00", text)


if __name__ == "__main__":
    unittest.main()
`;

export const TASKS = [
  // ---- print-autocompact, prompt 1: orientation (short enough to stay under the threshold)
  {
    name: "orient",
    match: /^Get me oriented in the `ledger` package/,
    steps: [
      { calls: [["read", { path: "README.md" }], ["read", { path: "ledger/__init__.py" }]] },
      { calls: [["read", { path: "ledger/core.py" }]] },
      { calls: [["bash", { command: UNITTEST }]] },
      { calls: [["bash", { command: "mypy ledger" }]] },
      {
        text: `Here is where \`ledger\` stands:

- \`ledger/core.py\` holds \`Transaction\`, \`Ledger\`, \`parse_amount\` and \`format_cents\`; amounts are integer cents.
- \`${UNITTEST}\`: 7 tests, 2 broken. \`test_parse_amount_rounds_half_up\` fails with \`AssertionError: 267 != 268\` (\`parse_amount\` truncates the third decimal instead of rounding), and \`test_parse_amount_parentheses\` errors with \`ValueError: invalid literal for int() with base 10: '(12'\` (accounting negatives are not understood).
- \`mypy ledger\` → \`mypy: command not found\`. I won't install it: the job is standard library only.

- **No type checker**: mypy is not available and installing it would break the standard-library-only rule, so tests are the only safety net.
- **Leave the failing tests for now**: both failures are in \`parse_amount\`; fixing them belongs with the CSV work that needs the same parsing.

Next: add CSV import in \`ledger/csv_import.py\`, then fix \`parse_amount\`.`,
      },
    ],
  },
  // ---- print-autocompact, prompt 2: CSV import (long, tool-heavy turn)
  {
    name: "csv-import",
    match: /^Add CSV import: a new module `ledger\/csv_import\.py`/,
    steps: [
      { calls: [["read", { path: "data/transactions.csv" }]] },
      { calls: [["read", { path: "ledger/legacy.py" }]] },
      { calls: [["bash", { command: "head -3 data/transactions.csv && wc -l data/transactions.csv && grep -n '(' data/transactions.csv" }]] },
      { calls: [["read", { path: "tests/test_core.py" }]] },
      { calls: [["write", { path: "ledger/csv_import.py", content: CSV_IMPORT_V1 }]] },
      { calls: [["bash", { command: LOAD_ALL }]] },
      {
        calls: [
          [
            "edit",
            {
              path: "ledger/csv_import.py",
              edits: [
                { oldText: "def load_transactions(", newText: NORMALIZE_FN },
                { oldText: 'amount_cents=parse_amount(row["amount"]),', newText: 'amount_cents=parse_amount(_normalize_amount(row["amount"])),' },
              ],
            },
          ],
        ],
      },
      { calls: [["bash", { command: LOAD_ALL }]] },
      { calls: [["bash", { command: UNITTEST }]] },
      {
        text: (ctx) => `\`ledger/csv_import.py\` is in place: \`load_transactions(path)\` reads \`data/transactions.csv\` with \`csv.DictReader\` and builds \`Transaction\` objects through \`parse_amount\`. ${ctx.find(/^\d+ transactions, balance -?\d+/m, "All rows load")}.

- **Refunds in parentheses**: the first run died with \`${ctx.find(/ValueError: .*/, "ValueError")}\`; \`_normalize_amount\` in \`csv_import.py\` now turns \`(8.41)\` into \`-8.41\` before \`parse_amount\`. It is a stopgap until \`parse_amount\` learns the format.
- **Column conventions from the old importer**: \`ledger/legacy.py\` used floats and a fixed-width layout; I only read it for the column order and did not change it.

The two \`parse_amount\` tests still fail (\`AssertionError: 267 != 268\` and the \`'(12'\` ValueError) because \`ledger/core.py\` is unchanged.

Next: fix \`parse_amount\` in \`ledger/core.py\` and drop the \`_normalize_amount\` workaround.
Next: add tests for the importer in \`tests/test_csv_import.py\`.`,
      },
    ],
  },
  // ---- print-autocompact, prompt 3: fix parse_amount + importer tests (long turn)
  {
    name: "fix-parse-amount",
    match: /^Fix `parse_amount` in `ledger\/core\.py` properly/,
    steps: [
      { calls: [["read", { path: "ledger/core.py" }]] },
      {
        calls: [
          [
            "edit",
            {
              path: "ledger/core.py",
              edits: [
                { oldText: CORE_IMPORT_OLD, newText: CORE_IMPORT_NEW },
                { oldText: PARSE_AMOUNT_OLD, newText: PARSE_AMOUNT_NEW },
              ],
            },
          ],
        ],
      },
      { calls: [["bash", { command: UNITTEST }]] },
      { calls: [["read", { path: "ledger/csv_import.py" }]] },
      {
        calls: [
          [
            "edit",
            {
              path: "ledger/csv_import.py",
              edits: [
                { oldText: NORMALIZE_FN, newText: "def load_transactions(" },
                { oldText: 'amount_cents=parse_amount(_normalize_amount(row["amount"])),', newText: 'amount_cents=parse_amount(row["amount"]),' },
              ],
            },
          ],
        ],
      },
      { calls: [["write", { path: "tests/test_csv_import.py", content: TEST_CSV_IMPORT }]] },
      { calls: [["bash", { command: UNITTEST }]] },
      { calls: [["bash", { command: "wc -l data/transactions.csv && grep -n 'refund' data/transactions.csv" }]] },
      {
        calls: [
          [
            "edit",
            {
              path: "tests/test_csv_import.py",
              edits: [{ oldText: "self.assertEqual(len(load_transactions(DATA)), 240)", newText: "self.assertEqual(len(load_transactions(DATA)), 239)  # 240 lines minus the header" }],
            },
          ],
        ],
      },
      { calls: [["bash", { command: UNITTEST }]] },
      { calls: [["bash", { command: `${LOAD_ALL} | head -n 200` }]] },
      {
        text: `\`parse_amount\` in \`ledger/core.py\` now goes through \`Decimal\`: it rounds half up to the cent (\`2.675\` → 268) and accepts accounting negatives such as \`(12.50)\`. The \`_normalize_amount\` stopgap is gone from \`ledger/csv_import.py\`.

- **Decimal, then int cents**: \`Decimal(cleaned) * 100\` quantized with \`ROUND_HALF_UP\`, converted to \`int\` right away, so no float ever holds money.
- **Importer tests**: \`tests/test_csv_import.py\` checks the row count, negative refunds and integer cents. It first failed with \`AssertionError: 239 != 240\` because I counted the header line; \`data/transactions.csv\` has 239 rows.

\`${UNITTEST}\` now passes: 10 tests OK.

Next: add the monthly report.`,
      },
    ],
  },
  // ---- print-autocompact, prompt 4: monthly report (long turn)
  {
    name: "report",
    match: /^Add a monthly report: `ledger\/report\.py`/,
    steps: [
      { calls: [["read", { path: "ledger/csv_import.py" }], ["read", { path: "README.md" }]] },
      { calls: [["read", { path: "ledger/core.py" }]] },
      { calls: [["write", { path: "ledger/report.py", content: REPORT_V1 }]] },
      { calls: [["bash", { command: "python3 -m ledger.report data/transactions.csv" }]] },
      {
        calls: [
          [
            "edit",
            {
              path: "ledger/report.py",
              edits: [
                { oldText: "    for month, categories in months.items():", newText: "    for month, categories in sorted(months.items()):" },
                { oldText: "        for category, cents in categories.items():", newText: "        for category, cents in sorted(categories.items()):" },
              ],
            },
          ],
        ],
      },
      { calls: [["bash", { command: "python3 -m ledger.report data/transactions.csv" }]] },
      { calls: [["bash", { command: "python3 -m ledger.report; echo \"exit=$?\"" }]] },
      { calls: [["write", { path: "tests/test_report.py", content: TEST_REPORT }]] },
      { calls: [["bash", { command: UNITTEST }]] },
      { calls: [["bash", { command: `${LOAD_ALL} | grep '^2024-0[4-6]'` }]] },
      {
        text: `\`ledger/report.py\` is done: \`python3 -m ledger.report data/transactions.csv\` prints each month's total and its per-category totals, formatted with \`format_cents\`.

- **Sorted output**: the first run listed months in file order (the CSV is not chronological), so months and categories are now sorted.
- **Usage errors exit 2**: without a file argument it prints \`usage: python3 -m ledger.report FILE.csv\` and exits with code 2.
- **Report test**: \`tests/test_report.py\` checks month order and the month total line.

Tests pass (11 OK). I also printed the April to June rows from \`load_transactions\` to cross-check those months against the report.

Next: document \`load_transactions\` and the report in \`README.md\`.`,
      },
    ],
  },

  // ---- rpc-manual
  {
    name: "m-look",
    match: /^Read `ledger\/core\.py` and `tests\/test_core\.py`, run the tests/,
    steps: [
      { calls: [["read", { path: "ledger/core.py" }], ["read", { path: "tests/test_core.py" }]] },
      { calls: [["bash", { command: UNITTEST }]] },
      {
        text: `Two of the 7 tests in \`tests/test_core.py\` fail, both in \`parse_amount\` (\`ledger/core.py\`):

- \`test_parse_amount_rounds_half_up\`: \`AssertionError: 267 != 268\`; the third decimal is cut off instead of rounded.
- \`test_parse_amount_parentheses\`: \`ValueError: invalid literal for int() with base 10: '(12'\`; accounting negatives are not parsed.

Next: rewrite \`parse_amount\` on top of \`Decimal\`.`,
      },
    ],
  },
  {
    name: "m-fix",
    match: /^Fix the rounding bug in `parse_amount`/,
    steps: [
      {
        calls: [
          [
            "edit",
            {
              path: "ledger/core.py",
              edits: [
                { oldText: CORE_IMPORT_OLD, newText: CORE_IMPORT_NEW },
                { oldText: PARSE_AMOUNT_OLD, newText: PARSE_AMOUNT_NEW },
              ],
            },
          ],
        ],
      },
      { calls: [["bash", { command: UNITTEST }]] },
      {
        text: `Fixed. \`parse_amount\` now parses through \`Decimal\` with \`ROUND_HALF_UP\` and understands \`(12.50)\`; \`${UNITTEST}\` passes (7 tests OK). \`ledger/legacy.py\` was not touched.

- **Decimal in, int cents out**: the value is quantized to whole cents and converted to \`int\` immediately.`,
      },
    ],
  },
  {
    name: "m-data",
    match: /^How many refunds are in `data\/transactions\.csv`/,
    steps: [
      { calls: [["read", { path: "data/transactions.csv" }]] },
      { calls: [["bash", { command: "grep -c ',refund$' data/transactions.csv && grep ',refund$' data/transactions.csv | cut -d, -f2 | sort | uniq -c" }]] },
      {
        text: (ctx) => `There are ${ctx.find(/^\d+$/m, "several")} refunds in \`data/transactions.csv\`, all written as accounting negatives like \`(8.41)\` with category \`refund\`. With the fixed \`parse_amount\` they parse as negative cents.

- **Refunds stay negative**: \`(8.41)\` means -841 cents; no separate sign column is needed.`,
      },
    ],
  },
  {
    name: "m-legacy",
    match: /^Show me how `ledger\/legacy\.py` formats amounts/,
    steps: [
      { calls: [["bash", { command: "grep -n 'def \\|float\\|cents' ledger/legacy.py" }]] },
      { calls: [["read", { path: "ledger/legacy.py" }]] },
      { calls: [["bash", { command: "python3 -c \"from ledger import legacy; from ledger.core import format_cents; print(legacy.format_amount(-1250.0), '|', format_cents(-1250))\"" }]] },
      {
        text: `\`ledger/legacy.py\` keeps money as \`float\` dollars and formats with \`'%.2f'\` in \`format_amount\`, padding to a 12-character fixed-width column; \`format_cents\` in \`ledger/core.py\` takes integer cents and never pads.

- **Keep the two apart**: legacy output is only for the auditors' fixed-width files; new code should use \`format_cents\`.`,
      },
    ],
  },
  {
    name: "m-import",
    match: /^Write `ledger\/csv_import\.py` with `load_transactions\(path\)`/,
    steps: [
      { calls: [["read", { path: "data/transactions.csv" }]] },
      { calls: [["read", { path: "ledger/core.py" }]] },
      { calls: [["write", { path: "ledger/csv_import.py", content: CSV_IMPORT_V1 }]] },
      { calls: [["bash", { command: LOAD_ALL }]] },
      { calls: [["write", { path: "tests/test_csv_import.py", content: TEST_CSV_IMPORT }]] },
      { calls: [["bash", { command: UNITTEST }]] },
      { calls: [["bash", { command: "wc -l data/transactions.csv && grep -n 'refund' data/transactions.csv" }]] },
      { calls: [["edit", { path: "tests/test_csv_import.py", edits: [{ oldText: "self.assertEqual(len(load_transactions(DATA)), 240)", newText: "self.assertEqual(len(load_transactions(DATA)), 239)  # 240 lines minus the header" }] }]] },
      { calls: [["bash", { command: UNITTEST }]] },
      {
        text: `\`ledger/csv_import.py\` loads all 239 rows of \`data/transactions.csv\`; refunds such as \`(8.41)\` come out negative because \`parse_amount\` already handles parentheses. \`tests/test_csv_import.py\` first failed with \`AssertionError: 239 != 240\` (I had counted the header line); with 239 all 10 tests pass.

- **Importer relies on parse_amount**: no amount normalization in \`csv_import.py\`; \`parse_amount\` in \`ledger/core.py\` is the single place that understands amount formats.`,
      },
    ],
  },

  {
    name: "m-readme",
    match: /^Add a short "CSV import" section to `README\.md`/,
    steps: [
      { calls: [["read", { path: "README.md" }]] },
      {
        calls: [
          [
            "edit",
            {
              path: "README.md",
              edits: [
                {
                  oldText: "## Conventions\n",
                  newText: "## CSV import\n\n`ledger.csv_import.load_transactions(path)` reads a bank export such as `data/transactions.csv`\n(header `date,payee,amount,category`) into `Transaction` objects; amounts go through `parse_amount`.\n\n## Conventions\n",
                },
              ],
            },
          ],
        ],
      },
      { text: "Added a \"CSV import\" section to `README.md` that documents `load_transactions(path)` and the expected CSV header." },
    ],
  },

  // ---- rpc-branch
  {
    name: "b-status",
    match: /^Run the tests and tell me what fails in `ledger\/core\.py`/,
    steps: [
      { calls: [["bash", { command: UNITTEST }]] },
      { calls: [["read", { path: "ledger/core.py" }]] },
      {
        text: `Both failures are in \`parse_amount\`: \`AssertionError: 267 != 268\` (truncation instead of rounding) and \`ValueError: invalid literal for int() with base 10: '(12'\` (no accounting negatives).`,
      },
    ],
  },
  {
    name: "b-float",
    match: /^Try making `parse_amount` return float dollars/,
    steps: [
      { calls: [["edit", { path: "ledger/core.py", edits: [{ oldText: PARSE_AMOUNT_OLD, newText: PARSE_AMOUNT_FLOAT }] }]] },
      { calls: [["bash", { command: `${UNITTEST} 2>&1 | grep -E 'Error|FAIL|Ran|OK'` }]] },
      {
        text: `With float dollars \`parse_amount("12.50")\` returns \`12.5\`, so every cents-based test breaks (\`AssertionError: 12.5 != 1250\`), and \`2.675\` still does not round to 268. Floats are the wrong direction for this package.

- **Reject float dollars**: the whole package counts integer cents.`,
      },
    ],
  },
  {
    name: "b-decimal",
    match: /^Undo the float experiment in `ledger\/core\.py`/,
    steps: [
      { calls: [["read", { path: "ledger/core.py" }]] },
      {
        calls: [
          [
            "edit",
            {
              path: "ledger/core.py",
              edits: [
                { oldText: CORE_IMPORT_OLD, newText: CORE_IMPORT_NEW },
                { oldText: PARSE_AMOUNT_FLOAT, newText: PARSE_AMOUNT_NEW },
              ],
            },
          ],
        ],
      },
      { calls: [["bash", { command: UNITTEST }]] },
      {
        text: `\`parse_amount\` is back on integer cents, now via \`Decimal\` with \`ROUND_HALF_UP\` and with \`(12.50)\` support; \`${UNITTEST}\` passes (7 tests OK).

- **Decimal instead of float**: exact decimal parsing, then \`int\` cents.`,
      },
    ],
  },
  {
    name: "b-test",
    match: /^Add a test that `format_cents` handles large negative amounts/,
    steps: [
      {
        calls: [
          [
            "edit",
            {
              path: "tests/test_core.py",
              edits: [
                {
                  oldText: '        self.assertEqual(format_cents(120499), "1204.99")\n',
                  newText: '        self.assertEqual(format_cents(120499), "1204.99")\n\n    def test_format_cents_large_negative(self):\n        self.assertEqual(format_cents(-123456789), "-1234567.89")\n',
                },
              ],
            },
          ],
        ],
      },
      { calls: [["bash", { command: `${UNITTEST} 2>&1 | tail -n 4` }]] },
      { text: "Added `test_format_cents_large_negative` to `tests/test_core.py`; all 8 tests pass." },
    ],
  },
];
