"""Test data shared by the write-path suites."""

from __future__ import annotations

# Three candidates unrelated to the fixture memories (a billing web app) and to each other.
NEW = [
    {
        "type": "gotcha",
        "title": "Greenhouse humidity sensors drain batteries in frost",
        "body": "The greenhouse humidity sensors lose their lithium charge overnight whenever the "
        "glasshouse drops below freezing; swap the cells every autumn before the first frost.",
    },
    {
        "type": "fact",
        "title": "The office parrot answers only to whistled Vivaldi",
        "body": "Bartholomew, the office parrot, ignores spoken names and responds only to whistled "
        "melodies from the Four Seasons concertos, mostly the spring allegro.",
    },
    {
        "type": "procedure",
        "title": "Tune the harpsichord with meantone temperament",
        "body": "Before each baroque concert, tune the middle octave of the harpsichord by ear against "
        "a fork at 415 hertz using quarter-comma meantone, then copy the octaves outward.",
    },
]
