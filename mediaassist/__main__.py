from mediaassist.cli import main

raise SystemExit(main())
