"""Skill files: parse, find, reassemble and diff SKILL.md files, and the gates an evolved skill must pass."""
