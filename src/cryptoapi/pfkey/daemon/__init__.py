"""The key daemon: a :class:`~cryptoapi.pfkey.km.manager.KeyManager` behind an owner-only Unix
``SOCK_SEQPACKET`` socket (``server``, ``unixsocket``), its durable ``--state`` file
(``store``, its tables in ``schema``, ``usage``), and a client."""
