# s3-no-kernel.cake
# Checks §3: a file holds at least one kernel (this one holds only comments).
# Expected: CK-SYN-004
