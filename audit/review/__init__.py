"""Reviews: storing labels, imports, the queue, sampled review, assigned and blind review, errata, roles."""
