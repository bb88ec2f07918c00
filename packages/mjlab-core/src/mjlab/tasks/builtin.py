"""The built-in tasks: the entry point `builtin` of mjlab-core in the `mjlab.tasks` group.

Every task folder of `mjlab.tasks` is one home: its env config, its own terms (`mdp.py`), its
PPO settings (`rl_cfg.py`) and a `registration.py` that registers its task ids. Importing this
module imports the `registration` module of every subpackage that has one, so adding a
built-in task is adding a folder. Outside projects register the same way, through their own
`mjlab.tasks` entry point (`mjlab.tasks.registry`).
"""

import importlib
import importlib.util
import pkgutil

import mjlab.tasks

for _folder in pkgutil.iter_modules(mjlab.tasks.__path__):
    _name = f"mjlab.tasks.{_folder.name}.registration"
    if _folder.ispkg and importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name)
