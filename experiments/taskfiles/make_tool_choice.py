"""Write experiments/skills/tool-choice/evals/tasks.jsonl from the tool catalogue of its SKILL.md.

Three task families, each answer fixed by the catalogue: ``tool_call`` (the call, with the arguments
the request determines), ``choice`` (which tool to call first) and ``json`` plans (the tools in call
order, validated against a JSON Schema and compared with the expected list).

Usage: ``python experiments/taskfiles/make_tool_choice.py`` (rewrites the file; deterministic).
"""

from __future__ import annotations

import json
from pathlib import Path

from taskfile_out import write_task_file  # the sibling module (this folder is on sys.path)

OUT = Path(__file__).resolve().parents[1] / "skills" / "tool-choice" / "evals" / "tasks.jsonl"

#: The catalogue of the skill (names only; SKILL.md documents the arguments).
TOOLS: tuple[str, ...] = ("web_search", "fetch_url", "read_file", "write_file", "list_directory", "search_files",
                          "run_shell", "send_email", "create_event", "calculator", "get_weather", "translate")
#: Group of each tool: a request's domain (splits keep a domain together).
DOMAIN = {"web_search": "web", "fetch_url": "web", "read_file": "files-read", "list_directory": "files-read",
          "search_files": "files-read", "write_file": "files-write", "run_shell": "shell", "send_email": "email",
          "create_event": "calendar", "calculator": "math", "get_weather": "weather", "translate": "translate"}

CALL_NOTE = 'Reply with only the tool call as JSON: {"tool": "<name>", "arguments": {...}}.'
CHOICE_NOTE = "Which single tool should be called first? Answer with the tool name only."
PLAN_NOTE = ('Reply with only JSON {"plan": [...]} listing the tools in the order they are called, one entry '
             'per call.')
PLAN_SCHEMA = {"type": "object", "required": ["plan"], "additionalProperties": False,
               "properties": {"plan": {"type": "array", "minItems": 1, "items": {"enum": list(TOOLS)}}}}

#: (request, tool, expected argument subset)
CALLS: tuple[tuple[str, str, dict], ...] = (
    ("What's the weather like in Lisbon right now? I want it in Fahrenheit.", "get_weather",
     {"city": "Lisbon", "units": "imperial"}),
    ("Is it raining in Osaka at the moment?", "get_weather", {"city": "Osaka"}),
    ("Translate 'Where is the train station?' into German.", "translate",
     {"text": "Where is the train station?", "target_language": "de"}),
    ("How do I say 'thank you very much' in Japanese?", "translate",
     {"text": "thank you very much", "target_language": "ja"}),
    ("What is 17% of 2,340?", "calculator", {}),
    ("What is the square root of 7921?", "calculator", {}),
    ("Open https://docs.python.org/3/library/datetime.html and tell me what it covers.", "fetch_url",
     {"url": "https://docs.python.org/3/library/datetime.html"}),
    ("Find recent news about the James Webb Space Telescope; the top 3 results are enough.", "web_search",
     {"max_results": 3}),
    ("Look up who won the 2018 FIFA World Cup.", "web_search", {}),
    ("Show me lines 10 to 20 of config.yaml.", "read_file", {"path": "config.yaml", "start_line": 10, "end_line": 20}),
    ("Show me the README.md file.", "read_file", {"path": "README.md"}),
    ("Save the text 'hello world' into notes.txt, replacing what is there.", "write_file",
     {"path": "notes.txt", "content": "hello world"}),
    ("Add the line 'buy milk' to the end of todo.txt.", "write_file",
     {"path": "todo.txt", "content": "buy milk", "append": True}),
    ("How much free disk space is there? Use df -h.", "run_shell", {"command": "df -h"}),
    ("Run pytest, but give up after 5 minutes.", "run_shell", {"command": "pytest", "timeout_s": 300}),
    ("Email alice@example.com with the subject 'Lunch' and the message 'Noon at the usual place?'", "send_email",
     {"to": "alice@example.com", "subject": "Lunch", "body": "Noon at the usual place?"}),
    ("Tell bob@example.org by email that the build is fixed; use the subject 'Build'.", "send_email",
     {"to": "bob@example.org", "subject": "Build"}),
    ("Put a 30-minute meeting called 'Standup' in my calendar on 2025-03-03 at 09:00.", "create_event",
     {"title": "Standup", "start": "2025-03-03T09:00", "duration_minutes": 30}),
    ("Book 'Dentist' on 2025-07-14 at 15:30 for 45 minutes.", "create_event",
     {"title": "Dentist", "start": "2025-07-14T15:30", "duration_minutes": 45}),
    ("What files are in the src folder?", "list_directory", {"path": "src"}),
    ("Which files under lib/ contain the word TODO?", "search_files", {"pattern": "TODO", "path": "lib"}),
)

#: (request, the first tool to call)
CHOICES: tuple[tuple[str, str], ...] = (
    ("Download the page at https://example.com/pricing.", "fetch_url"),
    ("Tell me tomorrow's forecast for Nairobi.", "get_weather"),
    ("What is 2 to the power of 64?", "calculator"),
    ("Which files in the repository define a class named Parser?", "search_files"),
    ("Make a new file hello.py containing print('hi').", "write_file"),
    ("What's in the docs/ folder?", "list_directory"),
    ("Schedule 'Gym' for 2025-05-02 at 07:00 for an hour.", "create_event"),
    ("Send the weekly report summary to my manager at m@corp.example.", "send_email"),
    ("Find articles comparing Rust and Go.", "web_search"),
    ("Put 'Guten Morgen' into English.", "translate"),
    ("Show the last 5 commits of the git log.", "run_shell"),
    ("Show me the contents of setup.cfg.", "read_file"),
    ("Read the file at https://example.com/robots.txt.", "fetch_url"),
)

#: (request, the tools in call order)
PLANS: tuple[tuple[str, list[str]], ...] = (
    ("Search the web for the Python 3.13 release notes and open the first result.", ["web_search", "fetch_url"]),
    ("Read data.csv and email its contents to ann@example.com.", ["read_file", "send_email"]),
    ("Check the weather in Oslo for Saturday, then add a 'Picnic' event on 2025-06-14 at 12:00 for two hours.",
     ["get_weather", "create_event"]),
    ("List the files in logs/ and then show me app.log.", ["list_directory", "read_file"]),
    ("Find which file defines the function main and open that file.", ["search_files", "read_file"]),
    ("Translate the contents of letter.txt into French and save the result as letter_fr.txt.",
     ["read_file", "translate", "write_file"]),
    ("Compute a 15% tip on 86.40 and email the amount to me@example.com.", ["calculator", "send_email"]),
    ("Run the unit tests with pytest and save the output to test_log.txt.", ["run_shell", "write_file"]),
    ("Fetch https://example.com/rates.json and add up the three rates in it with the calculator.",
     ["fetch_url", "calculator"]),
    ("Look up the height of Mount Everest in metres online, then convert it to feet with the calculator.",
     ["web_search", "calculator"]),
    ("What's the weather in Paris and in Rome? Check both cities.", ["get_weather", "get_weather"]),
)


def tasks() -> list[dict]:
    rows = []
    for i, (request, tool, args) in enumerate(CALLS, start=1):
        shown = json.dumps({"tool": tool, "arguments": args})
        rows.append({"id": f"call-{i}", "group": DOMAIN[tool], "input": f"Request: {request}\n{CALL_NOTE}",
                     "rubric": f"Calls {tool} with arguments including {json.dumps(args)}, as one JSON object "
                               f"like {shown}.",
                     "checks": [{"type": "tool_call", "tool": tool, "arguments": args, "tools": list(TOOLS)}],
                     "tags": ["tool_call", tool]})
    for i, (request, tool) in enumerate(CHOICES, start=1):
        rows.append({"id": f"choose-{i}", "group": DOMAIN[tool], "input": f"Request: {request}\n{CHOICE_NOTE}",
                     "rubric": f"Names {tool} as the tool to call first, and no other tool.",
                     "checks": [{"type": "choice", "options": list(TOOLS), "answer": tool},
                                {"type": "max_chars", "limit": 200}],
                     "tags": ["choice", tool]})
    for i, (request, plan) in enumerate(PLANS, start=1):
        rows.append({"id": f"plan-{i}", "group": DOMAIN[plan[0]], "input": f"Request: {request}\n{PLAN_NOTE}",
                     "rubric": f"Replies with the JSON plan {json.dumps({'plan': plan})}.",
                     "checks": [{"type": "json", "path": "plan", "value": plan, "schema": PLAN_SCHEMA}],
                     "tags": ["json", "plan"]})
    return rows


def main() -> None:
    write_task_file(tasks(), OUT)


if __name__ == "__main__":
    main()
