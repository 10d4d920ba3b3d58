from judge.core.children import leave
from judge.core.runner.main import main

leave(main())
