# sim/: see DESIGN.md (module added by its issue).
