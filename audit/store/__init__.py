"""The SQLite store: connection, migrations, schema check, the plan and share reads. Imports nothing of audit but
audit.errors."""
