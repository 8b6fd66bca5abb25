from mediaassist.entry import main

raise SystemExit(main())
