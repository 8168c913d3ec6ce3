"""OpenSSL's libcrypto called from C: ESP's combined modes (priority 310) and its
encrypt-then-MAC, ``authenc(hmac(...),cbc(aes))`` (300), as a CPython extension built on
first use (``esp_batch.c``, :mod:`~cryptoapi.providers.libcrypto.extension`), which also
frames and opens whole runs of ESP packets in one call. The same library as the ``openssl``
provider reaches through ``cryptography``, without Python between one packet and the next.
"""
