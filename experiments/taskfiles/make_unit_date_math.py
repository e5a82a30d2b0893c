"""Write experiments/skills/unit-date-math/evals/tasks.jsonl: every expected answer computed here.

Unit factors are exact by definition (international yard and pound agreement, 1959: 1 in = 25.4 mm,
1 lb = 0.45359237 kg; US gallon = 231 in³ = 3.785411784 L; US fluid ounce = 1/128 US gallon; acre =
4,046.8564224 m²; IEC binary prefixes: 1 GiB = 2^30 bytes); temperatures by their defining formulas; dates
with Python's ``datetime`` (proleptic Gregorian calendar, ISO 8601 weeks).

Usage: ``python experiments/taskfiles/make_unit_date_math.py`` (rewrites the file; deterministic).
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from taskfile_out import write_task_file  # the sibling module (this folder is on sys.path)

OUT = Path(__file__).resolve().parents[1] / "skills" / "unit-date-math" / "evals" / "tasks.jsonl"

MILE_M, INCH_M, FOOT_M, YARD_M = 1609.344, 0.0254, 0.3048, 0.9144
LB_KG, OZ_G = 0.45359237, 28.349523125
GAL_L = 3.785411784
FLOZ_ML = GAL_L * 1000 / 128
ACRE_M2 = 4046.8564224

UNITS = {
    "km": ["km", "kilometres", "kilometers", "kilometre", "kilometer"],
    "m": ["m", "metres", "meters", "metre", "meter"],
    "cm": ["cm", "centimetres", "centimeters", "centimetre", "centimeter"],
    "mi": ["mi", "miles", "mile"],
    "ft": ["ft", "feet", "foot"],
    "kg": ["kg", "kilograms", "kilogram", "kilos"],
    "g": ["g", "grams", "gram"],
    "lb": ["lb", "lbs", "pounds", "pound"],
    "L": ["L", "l", "litres", "liters", "litre", "liter"],
    "mL": ["mL", "ml", "millilitres", "milliliters"],
    "gal": ["gal", "gallons", "gallon", "US gallons"],
    "C": ["°C", "degrees Celsius", "degrees C", "Celsius", "C"],
    "F": ["°F", "degrees Fahrenheit", "degrees F", "Fahrenheit", "F"],
    "K": ["K", "kelvin", "kelvins"],
    "m/s": ["m/s", "metres per second", "meters per second"],
    "km/h": ["km/h", "kph", "kilometres per hour", "kilometers per hour"],
    "m2": ["m²", "m2", "square metres", "square meters", "sq m"],
    "ha": ["ha", "hectares", "hectare"],
    "bytes": ["bytes", "B"],
    "MiB": ["MiB", "mebibytes"],
    "s": ["s", "seconds", "second", "sec"],
    "min": ["min", "minutes", "minute"],
    "h": ["h", "hours", "hour", "hrs"],
    "days": ["days", "day"],
    "weeks": ["weeks", "week"],
}
WEEKDAYS = list(calendar.day_name)
ISO_NOTE = "Answer with the date only, in ISO 8601 format (YYYY-MM-DD)."
SHORT = {"type": "max_chars", "limit": 160}


def number(value: float, unit: str | None, decimals: int | None) -> dict:
    """A number check: tolerance half a unit of the last asked decimal place (so a correctly rounded answer
    passes and the next rounding step does not), or 1e-6 relative when no rounding is asked."""
    check: dict = {"type": "number", "value": round(value, 10)}
    if decimals is None:
        check["rel_tol"] = 1e-6
    else:
        check["abs_tol"] = round(0.5 * 10 ** -decimals + 1e-9, 12)
    if unit:
        check["unit"] = UNITS[unit]
    return check


def rounding(decimals: int | None) -> str:
    if decimals is None:
        return ""
    if decimals == 0:
        return " Round to the nearest whole number."
    return f" Round to {decimals} decimal place{'s' if decimals > 1 else ''}."


def conversion(tid: str, group: str, question: str, value: float, unit: str, decimals: int | None) -> dict:
    shown = f"{value:.{decimals}f}" if decimals is not None else f"{value:g}"
    return {"id": tid, "group": group,
            "input": f"{question}{rounding(decimals)} Give the number with its unit.",
            "rubric": f"Gives {shown} {UNITS[unit][0]} as the single final answer, with the unit.",
            "checks": [number(value, unit, decimals), SHORT], "tags": ["units", group]}


def iso_date_task(tid: str, group: str, question: str, answer: date, also_wrong: tuple[str, ...] = ()) -> dict:
    """A date answer: the ISO date by regex; the dates one day off (and ``also_wrong``) are forbidden."""
    wrong = [d.isoformat() for d in (answer - timedelta(days=1), answer + timedelta(days=1))] + list(also_wrong)
    return {"id": tid, "group": group, "input": f"{question} {ISO_NOTE}", "answer": answer.isoformat(),
            "rubric": f"Gives the date {answer.isoformat()} in ISO 8601 format and no other date.",
            # the literal first, then the look-behind: a pattern that starts with literal text is searched
            # fast (a leading look-behind makes the regex engine try it at every position)
            "checks": [{"type": "regex", "pattern": rf"{answer.isoformat()}(?<![0-9-]{answer.isoformat()})(?![0-9])"},
                       {"type": "forbidden", "phrases": wrong}, SHORT],
            "tags": ["dates", group]}


def weekday_task(tid: str, group: str, day: date) -> dict:
    name = WEEKDAYS[day.weekday()]
    return {"id": tid, "group": group,
            "input": f"What day of the week was {day.isoformat()}? Answer with the weekday name only.", "answer": name,
            "rubric": f"Names {name} as the weekday of {day.isoformat()}, and no other weekday.",
            "checks": [{"type": "any_of", "values": [name, name[:3]]},
                       {"type": "forbidden", "phrases": [w for w in WEEKDAYS if w != name]}, SHORT],
            "tags": ["dates", "weekday"]}


def count_task(tid: str, group: str, question: str, value: float, unit: str) -> dict:
    return {"id": tid, "group": group, "input": f"{question} Give the number with its unit.",
            "rubric": f"Gives {value:g} {unit} as the single final answer.",
            "checks": [number(value, unit, None), SHORT], "tags": ["dates", group]}


def tasks() -> list[dict]:
    rows: list[dict] = []
    add = rows.append
    # ---- length
    add(conversion("len-1", "length", "Convert 5 miles to kilometres.", 5 * MILE_M / 1000, "km", 2))
    add(conversion("len-2", "length", "A runner covers 42.195 km. How many miles is that?", 42195 / MILE_M, "mi", 2))
    add(conversion("len-3", "length", "How many centimetres are in 6 feet 2 inches?", (6 * 12 + 2) * INCH_M * 100,
                   "cm", 1))
    add(conversion("len-4", "length", "A ceiling is 2.4 m high. What is that in feet?", 2.4 / FOOT_M, "ft", 2))
    add(conversion("len-5", "length", "How many metres long is a 100-yard field?", 100 * YARD_M, "m", 2))
    # ---- mass
    add(conversion("mass-1", "mass", "Convert 150 lb to kilograms.", 150 * LB_KG, "kg", 2))
    add(conversion("mass-2", "mass", "A parcel weighs 2.5 kg. What is its weight in pounds?", 2.5 / LB_KG, "lb", 2))
    add(conversion("mass-3", "mass", "How many grams are in 12 ounces (avoirdupois)?", 12 * OZ_G, "g", 1))
    add(conversion("mass-4", "mass", "A recipe needs 1.75 pounds of flour. How many grams is that?",
                   1.75 * LB_KG * 1000, "g", 0))
    # ---- volume
    add(conversion("vol-1", "volume", "Convert 3 US gallons to litres.", 3 * GAL_L, "L", 2))
    add({"id": "vol-2", "group": "volume", "answer": f"{500 / FLOZ_ML:.2f} fl oz",
         "input": "How many US fluid ounces are in 500 mL? Round to 2 decimal places. Answer as '<number> fl oz'.",
         "rubric": f"Gives {500 / FLOZ_ML:.2f} fl oz (US fluid ounces) as the single final answer.",
         "checks": [number(500 / FLOZ_ML, None, 2), {"type": "contains", "phrases": ["fl oz"]}, SHORT],
         "tags": ["units", "volume"]})
    add(conversion("vol-3", "volume", "A tank holds 200 litres. How many US gallons is that?", 200 / GAL_L, "gal", 2))
    add(conversion("vol-4", "volume", "How many millilitres are in 8 US fluid ounces?", 8 * FLOZ_ML, "mL", 1))
    # ---- temperature
    add(conversion("temp-1", "temperature", "Convert 98.6 °F to degrees Celsius.", (98.6 - 32) * 5 / 9, "C", 1))
    add(conversion("temp-2", "temperature", "Convert -40 °C to degrees Fahrenheit.", -40 * 9 / 5 + 32, "F", 0))
    add(conversion("temp-3", "temperature", "Water boils at 100 °C at sea level. What is that in kelvin?",
                   100 + 273.15, "K", 2))
    add(conversion("temp-4", "temperature", "An oven is set to 350 °F. What is that in degrees Celsius?",
                   (350 - 32) * 5 / 9, "C", 1))
    add(conversion("temp-5", "temperature", "Convert 0 K to degrees Celsius.", -273.15, "C", 2))
    # ---- speed and area
    add(conversion("speed-1", "speed-area", "Convert 90 km/h to metres per second.", 90 / 3.6, "m/s", 1))
    add(conversion("speed-2", "speed-area", "A car drives at 65 mph. What is that in km/h?", 65 * MILE_M / 1000,
                   "km/h", 1))
    add(conversion("area-1", "speed-area", "How many square metres is 2 acres?", 2 * ACRE_M2, "m2", 0))
    add(conversion("area-2", "speed-area", "How many hectares is 10 acres?", 10 * ACRE_M2 / 10_000, "ha", 3))
    # ---- data and time units
    add(conversion("data-1", "data-time", "How many bytes are in 3 GiB?", 3 * 2**30, "bytes", None))
    add(conversion("data-2", "data-time", "A file is 250,000,000 bytes. How many MiB is that?", 250_000_000 / 2**20,
                   "MiB", 2))
    add(conversion("time-1", "data-time", "How many seconds are in 3.5 hours?", 3.5 * 3600, "s", None))
    add(conversion("time-2", "data-time", "How many minutes are in one week?", 7 * 24 * 60, "min", None))
    # ---- adding days
    add(iso_date_task("add-1", "date-add", "What is the date 90 days after 2024-01-15?",
                      date(2024, 1, 15) + timedelta(days=90)))
    add(iso_date_task("add-2", "date-add", "What is the date 45 days before 2023-03-10?",
                      date(2023, 3, 10) - timedelta(days=45)))
    add(iso_date_task("add-3", "date-add", "A subscription starts on 2025-11-20 and lasts 100 days, counting the "
                      "start day as day 1. On which date is its last day?", date(2025, 11, 20) + timedelta(days=99)))
    add(iso_date_task("add-4", "date-add", "What date is 6 weeks after 2024-12-28?",
                      date(2024, 12, 28) + timedelta(weeks=6)))
    add(iso_date_task("add-5", "date-add", "What date is 1000 days after 2000-01-01?",
                      date(2000, 1, 1) + timedelta(days=1000)))
    add(iso_date_task("add-6", "date-add", "What is the last day of February 2100?", date(2100, 2, 28),
                      ("2100-02-29",)))
    # ---- differences
    add(count_task("diff-1", "date-diff", "How many days are there from 2024-02-01 to 2024-03-01?",
                   (date(2024, 3, 1) - date(2024, 2, 1)).days, "days"))
    add(count_task("diff-2", "date-diff", "How many days are there from 2023-02-01 to 2023-03-01?",
                   (date(2023, 3, 1) - date(2023, 2, 1)).days, "days"))
    add(count_task("diff-3", "date-diff", "How many days passed between 1999-12-31 and 2000-12-31?",
                   (date(2000, 12, 31) - date(1999, 12, 31)).days, "days"))
    add(count_task("diff-4", "date-diff", "How many whole weeks are there from 2024-01-01 to 2024-06-03?",
                   (date(2024, 6, 3) - date(2024, 1, 1)).days // 7, "weeks"))
    add(count_task("diff-5", "date-diff", "How many hours are there from 2024-03-09 08:00 to 2024-03-11 20:00 "
                   "(one time zone, no daylight-saving change)?",
                   (datetime(2024, 3, 11, 20) - datetime(2024, 3, 9, 8)).total_seconds() / 3600, "h"))
    # ---- weekdays
    for i, day in enumerate([date(2000, 1, 1), date(1969, 7, 20), date(2024, 2, 29), date(2038, 1, 19),
                             date(1989, 11, 9)], start=1):
        add(weekday_task(f"wd-{i}", "weekday", day))
    # ---- calendar facts (exact, contains, number without unit)
    for i, year in enumerate([1900, 2000, 2024, 2100], start=1):
        leap = calendar.isleap(year)
        add({"id": f"leap-{i}", "group": "calendar", "input": f"Is {year} a leap year? Answer yes or no.",
             "rubric": f"Answers {'yes' if leap else 'no'}: {year} {'is' if leap else 'is not'} a leap year "
                       f"(Gregorian rule: divisible by 4, except centuries not divisible by 400).",
             "checks": [{"type": "exact", "value": "yes" if leap else "no"}], "tags": ["dates", "leap-year"]})
    iso_year, iso_week, _ = date(2024, 12, 30).isocalendar()
    add({"id": "isoweek-1", "group": "calendar",
         "input": "Which ISO 8601 week-numbering year and week does 2024-12-30 fall in? Answer as YYYY-Www.",
         "answer": f"{iso_year}-W{iso_week:02d}",
         "rubric": f"Gives {iso_year}-W{iso_week:02d}: ISO weeks start on Monday and week 1 holds the first Thursday.",
         "checks": [{"type": "regex", "pattern": rf"{iso_year}-W{iso_week:02d}(?<!\w{iso_year}-W{iso_week:02d})\b"},
                    {"type": "forbidden", "phrases": ["2024-W53", "2024-W01"]}, SHORT],
         "tags": ["dates", "iso-week"]})
    stamp = int(datetime(2024, 1, 1, tzinfo=UTC).timestamp())
    add({"id": "unix-1", "group": "calendar",
         "input": "What is the Unix timestamp (seconds since 1970-01-01T00:00:00Z) of 2024-01-01T00:00:00Z? "
                  "Answer with the integer only.",
         "rubric": f"Gives {stamp}.", "checks": [number(stamp, None, None), SHORT], "tags": ["dates", "unix"]})
    target = date(2024, 2, 20) + timedelta(days=100)
    add({"id": "add-wd-1", "group": "calendar",
         "input": "What is the date 100 days after 2024-02-20, and which weekday is it? Give the ISO date and the "
                  "weekday name.",
         "rubric": f"Gives {target.isoformat()} and {WEEKDAYS[target.weekday()]}.",
         "answer": f"{target.isoformat()}, {WEEKDAYS[target.weekday()]}",
         "checks": [{"type": "regex", "pattern": target.isoformat()},
                    {"type": "contains", "phrases": [WEEKDAYS[target.weekday()]]}, SHORT],
         "tags": ["dates", "weekday"]})
    return rows


def main() -> None:
    write_task_file(tasks(), OUT)


if __name__ == "__main__":
    main()
