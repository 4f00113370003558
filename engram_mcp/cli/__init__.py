def main() -> int:  # placeholder replaced below
    return 0
