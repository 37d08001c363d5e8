"""The kernel catalogues (one per operation family), selection, the program cache and tuning."""
