"""Write app/accounts/common_passwords.txt: the common passwords a new one is checked against.

    .venv/bin/python scripts/common_passwords.py

The list is the 30,000 most common passwords zxcvbn ships (MIT licence, from
Mark Burnett's 10 million password set), lower-cased, keeping only those at
least as long as the shortest password Quizlab accepts: shorter ones are
refused anyway. ASVS 2.1.7 asks for the check (docs/security.md, Passwords).
"""

from pathlib import Path

from zxcvbn.frequency_lists import FREQUENCY_LISTS

from app.accounts.users import MIN_PASSWORD

TARGET = Path(__file__).resolve().parent.parent / "app" / "accounts" / "common_passwords.txt"


def main() -> None:
    words = sorted({w.lower() for w in FREQUENCY_LISTS["passwords"] if len(w) >= MIN_PASSWORD})
    header = (
        "# The most common passwords of 10 characters or more, lower-cased, one a line:\n"
        "# written by scripts/common_passwords.py from zxcvbn's list (MIT licence).\n"
    )
    TARGET.write_text(header + "\n".join(words) + "\n", encoding="utf-8")
    print(f"{len(words)} passwords written to {TARGET}")


if __name__ == "__main__":
    main()
