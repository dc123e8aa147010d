package symbfile

import (
	"errors"

	"github.com/gosym-dev/gosym/gosym"
)

func errorsIsNotFound(err error) bool { return errors.Is(err, gosym.ErrPCNotFound) }
