"""The PF_KEY v2 wire format (RFC 2367 §2 with the KAME/Linux extensions): the numbers, one
definition of each ``sadb_*`` structure, and whole messages. Nothing here keeps state."""
