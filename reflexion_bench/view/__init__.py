"""``reflexion-bench view``: a local web viewer of run and sweep folders.

- :mod:`.data`: what each page shows, built from the run logs with the functions
  ``reflexion-bench report`` uses (metrics, Wilson/Newcombe intervals, McNemar).
- :mod:`.page`: the HTML page (one Jinja2 template, the bundled CSS and JS inlined),
  served or exported as one self-contained file.
- :mod:`.server`: the local server (127.0.0.1 only; JSON endpoints, a task's trials
  loaded on demand).
"""
