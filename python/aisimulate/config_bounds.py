"""The bounds a config is read within, one home for the JSON reader
(:mod:`aisimulate.config`) and the YAML reader (:mod:`aisimulate._yaml`): a config past
one is an error naming the bound, never a hang, a traceback or a silent cut.
Imports nothing."""

#: The largest config file read, bytes. A replay config is a few KB; the bound keeps a
#: device (``/dev/zero``) or a data file passed by mistake from being read whole.
MAX_CONFIG_BYTES = 1 << 20
#: The deepest nesting of mappings and lists in a config (the spec itself is 4 deep).
MAX_CONFIG_DEPTH = 64
#: The most values (mappings, lists, scalars) a config may hold once YAML aliases are
#: expanded: a few hundred bytes of nested aliases (``&a [*a, *a, …]``) would otherwise
#: expand to billions.
MAX_CONFIG_VALUES = 100_000
#: The most digits an integer in a config may have (Python refuses to read a decimal
#: integer of more than 4,300 digits with a ValueError; no spec value needs 30).
MAX_INT_DIGITS = 100
