"""libsodium's implementations (priority 200): another independent opinion for the
differential fuzzer, with code of its own (not OpenSSL's, not pycryptodome's).

Two bindings reach it. PyNaCl (its own bundled libsodium) serves the IETF ChaCha20-Poly1305
and XChaCha20-Poly1305 AEADs (``aead``), AES-256-GCM where the CPU has AES-NI and CLMUL, as a
partial ``gcm(aes)`` (``aes256gcm``), SHA-256/512 (``hashes``) and BLAKE2b (``blake2b``).
PyNaCl does not expose Poly1305, HMAC or the bare ChaCha20 streams, so those come through
pysodium, ctypes over the system's libsodium (Debian's ``libsodium23``, which
``scripts/system-deps`` installs): ``poly1305``, ``hmac`` (one-piece ``hmac(sha256)`` and
``hmac(sha512)``) and ``chacha20`` (``chacha20``, ``xchacha20``). Without a binding, or
without the system library, its modules offer nothing (remembered for the process, like
every optional provider).
"""
