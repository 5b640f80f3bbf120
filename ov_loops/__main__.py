from ov_loops.cli import main

raise SystemExit(main())
