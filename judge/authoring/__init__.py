"""What an author works with: packages and the course, the statement, validation (mutants and
properties), the scaffold, and the practice kit that is built from the packages."""
