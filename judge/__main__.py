from judge.cli import main

raise SystemExit(main())
