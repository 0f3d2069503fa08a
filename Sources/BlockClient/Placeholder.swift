import BlockCore
