"""pycryptodome's implementations (priority 200): an independent third opinion for the
differential fuzzer, next to the generic references and OpenSSL."""
